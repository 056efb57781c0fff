package engine

import (
	"fmt"

	"svcd/fsm"
)

// The apply loop is one goroutine for every write of the cluster, so no
// request may hold it for long. A batch that only reads never enters it:
// it is served from the node's replica, in one read transaction, without a
// log entry (batch_read.go). A batch that also writes runs in the log, and
// its reads (which see the batch's own earlier writes) share a budget of
// SQLite steps, counted by SQLite itself and identical on every replica:
// past it the batch fails, on every node alike, with a 422 that says to
// send the reads in a batch of their own. Writes are bounded before they
// are proposed (100 entries, the body limit, the filter language's limits).

// batchReadTicks is the read budget of a batch that writes, in fsm budget
// ticks: two million SQLite instructions, 20 to 30 ms of the apply loop on
// the machines of docs/benchmarks.md (a filtered list over a few thousand
// rows takes 20 to 50 ticks). SQLite's count(*) of a whole table is one
// instruction whatever the table's size: totals without a filter cost
// next to nothing here, and take a few milliseconds per million rows.
const batchReadTicks = 2_000

// errReadBudget refuses the reads of a batch that writes past its budget.
var errReadBudget = &Error{Kind: KindValidation, Message: fmt.Sprintf(
	"The reads of a batch that also writes may run at most %d SQLite steps together; "+
		"send them in a batch of their own (read-only batches are served without the log) or narrow them",
	batchReadTicks*fsm.BudgetTick)}

// readBudget is what is left of a batch's read budget while it applies
// (on is false for commands proposed before the bound).
type readBudget struct {
	on   bool
	left int64
}

func newReadBudget(ticks int64) *readBudget { return &readBudget{on: ticks > 0, left: ticks} }

// apply applies op with apply, under the budget when op reads.
func (b *readBudget) apply(tx *fsm.Tx, op batchOpCmd, apply func(*fsm.Tx, batchOpCmd) ([]byte, error)) ([]byte, error) {
	if op.Read == nil || !b.on {
		return apply(tx, op)
	}
	if b.left <= 0 {
		return nil, errReadBudget
	}
	stop := tx.Budget(b.left)
	body, err := apply(tx, op)
	used, exceeded := stop()
	b.left -= used
	if exceeded {
		// Whatever the read made of its interrupted statement, it is
		// refused.
		return nil, errReadBudget
	}
	return body, err
}
