package sqlconsole

// Error codes of a failed run (CONTRACT.md; SVC_FORBIDDEN is this
// module's, docs/sql.md). SVC_TOO_MANY_ROWS is never answered: rows are
// truncated instead.
const (
	CodeReadonly  = "SVC_READONLY"
	CodeSyntax    = "SVC_SYNTAX"
	CodeTimeout   = "SVC_TIMEOUT"
	CodeSQLError  = "SVC_SQL_ERROR"
	CodeForbidden = "SVC_FORBIDDEN"
	// CodeNotDeterministic: a write through the log that calls a function
	// whose value differs between replicas (random(), the date functions).
	CodeNotDeterministic = "SVC_NOT_DETERMINISTIC"
)

// Result is the answer of one run. A statement that failed is a Result
// with OK false, ErrorCode and Error, never a Go error.
type Result struct {
	OK         bool     `json:"ok"`
	Mode       string   `json:"mode"`
	Columns    []string `json:"columns"`
	Rows       [][]any  `json:"rows"`
	RowCount   int      `json:"rowCount"`
	Truncated  bool     `json:"truncated"`
	DurationMs int64    `json:"durationMs"`
	// Node names the node whose replica (readonly) or sandbox answered.
	Node string `json:"node"`
	// Changes counts the rows a sandbox or logged write changed.
	Changes   int64  `json:"changes,omitempty"`
	ErrorCode string `json:"errorCode,omitempty"`
	Error     string `json:"error,omitempty"`
}

// failed makes r a failure of code with message msg.
func (r *Result) failed(code, msg string) *Result {
	r.OK, r.ErrorCode, r.Error = false, code, msg
	r.Columns, r.Rows, r.RowCount, r.Truncated = []string{}, [][]any{}, 0, false
	return r
}
