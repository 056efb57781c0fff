package fsm

/*
#include <stdint.h>
#include <stdlib.h>

// The SQLite that go-sqlite3 compiles in: only the two symbols used here.
typedef struct sqlite3 sqlite3;
extern void sqlite3_progress_handler(sqlite3*, int, int (*)(void*), void*);

typedef struct {
	int64_t ticks;
	int64_t limit;
} svc_budget;

static int svc_budget_tick(void *p) {
	svc_budget *b = (svc_budget *)p;
	b->ticks++;
	return b->ticks > b->limit;
}

static void svc_budget_arm(void *db, svc_budget *b, int every) {
	if (b == NULL) {
		sqlite3_progress_handler((sqlite3 *)db, 0, NULL, NULL);
		return;
	}
	sqlite3_progress_handler((sqlite3 *)db, every, svc_budget_tick, b);
}
*/
import "C"

import (
	"errors"
	"reflect"
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// A step budget bounds what a piece of a command may cost in the apply
// loop, deterministically: SQLite counts the virtual-machine instructions
// its statements execute (its progress handler), which depends only on
// the statements, the database's logical content and the query plans, the
// same on every replica running the same binary. Wall-clock time would
// differ from node to node, and a command refused on one node but applied
// on another would split the replicas. A statement that runs out of
// budget fails with SQLITE_INTERRUPT; the transaction stays usable (only
// writes are rolled back by an interrupt, and budgets cover reads).
//
// BudgetTick is the granularity: one tick is this many instructions.
const BudgetTick = 1000

// ErrBudgetExceeded is what a statement run out of budget reports.
var ErrBudgetExceeded = errors.New("fsm: step budget exceeded")

// Budget limits the statements run through t until the returned stop is
// called to at most ticks progress ticks (ticks * BudgetTick instructions).
// stop reports the ticks used and whether the budget ran out; statements
// that failed for it return an error matching ErrBudgetExceeded through
// BudgetError.
func (t *Tx) Budget(ticks int64) (stop func() (used int64, exceeded bool)) {
	b := (*C.svc_budget)(C.malloc(C.size_t(unsafe.Sizeof(C.svc_budget{}))))
	b.ticks, b.limit = 0, C.int64_t(ticks)
	db := connHandle(t.w.conn)
	C.svc_budget_arm(db, b, BudgetTick)
	return func() (int64, bool) {
		C.svc_budget_arm(db, nil, 0)
		used, limit := int64(b.ticks), int64(b.limit)
		C.free(unsafe.Pointer(b))
		return used, used > limit
	}
}

// BudgetError turns the error of a statement interrupted by a spent budget
// into ErrBudgetExceeded (other errors are returned as they are).
func BudgetError(err error, exceeded bool) error {
	var se sqlite3.Error
	if exceeded && errors.As(err, &se) && se.Code == sqlite3.ErrInterrupt {
		return ErrBudgetExceeded
	}
	return err
}

// connHandle is the sqlite3* of a go-sqlite3 connection, which the driver
// keeps unexported.
func connHandle(c *sqlite3.SQLiteConn) unsafe.Pointer {
	return reflect.ValueOf(c).Elem().FieldByName("db").UnsafePointer()
}
