package jsvm

// A best-effort memory cap. goja has no limit on what code allocates:
// a runtime's own objects, strings and arrays are bounded only by the
// execution budget (execution.timeout_ms). What the helpers hand to code
// is bounded: each invocation may receive at most helperBudget bytes from
// helpers in all (records, lists, responses, query rows, rendered
// templates), and single answers have their own caps below. A helper
// that would exceed the budget throws instead.
const (
	// helperBudget is what one invocation may receive from helpers.
	helperBudget = 64 << 20
	// maxHTTPBytes caps one http or fetch response body.
	maxHTTPBytes = 10 << 20
	// defaultHTTPBytes is an http or fetch response's cap when the code
	// names none.
	defaultHTTPBytes = 5 << 20
	// maxDBRows caps the rows of one db query.
	maxDBRows = 1000
	// defaultQueryPerPage is helpers.query's page size (SPEC.md); the
	// engine's largest page (engine.MaxPerPage) caps it.
	defaultQueryPerPage = 100
)

// charge takes n bytes from the invocation's budget, or throws.
func (inv *invocation) charge(what string, n int) {
	inv.budget -= int64(n)
	if inv.budget < 0 {
		inv.fail("%s: the helpers of one run may hand code at most %d MiB in all (the memory cap)", what, helperBudget>>20)
	}
}
