package fsm

import "database/sql/driver"

// Tx is a handler's view of the batch transaction on the writer
// connection. Statements run through Exec, Query and QueryRow are prepared
// once and reused across batches; the Direct forms are for DDL and other
// one-off statements.
type Tx struct {
	w      *writer
	index  uint64
	events []Event
}

// Index is the log index of the command being applied. It is identical on
// every node, so handlers may use it as a deterministic sequence number.
func (t *Tx) Index() uint64 { return t.index }

// Exec runs a statement that returns no rows.
func (t *Tx) Exec(query string, args ...any) (driver.Result, error) {
	return t.w.exec(true, query, args)
}

// ExecDirect runs a statement without caching its preparation.
func (t *Tx) ExecDirect(query string, args ...any) (driver.Result, error) {
	return t.w.exec(false, query, args)
}

// Query runs a statement that returns rows. Close the rows before the
// next statement.
func (t *Tx) Query(query string, args ...any) (*Rows, error) { return t.w.query(true, query, args) }

// QueryDirect runs a one-off query without caching its preparation.
func (t *Tx) QueryDirect(query string, args ...any) (*Rows, error) {
	return t.w.query(false, query, args)
}

// QueryRow runs a statement expected to return at most one row.
func (t *Tx) QueryRow(query string, args ...any) *Row {
	rows, err := t.w.query(true, query, args)
	return &Row{rows: rows, err: err}
}

// Emit queues a change event. Events of a command that fails are dropped;
// the rest are delivered after the batch commits, in log order.
func (t *Tx) Emit(e Event) {
	e.Index = t.index
	t.events = append(t.events, e)
}
