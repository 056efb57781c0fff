package engine

import (
	"context"
	"log/slog"
	"time"

	"svcd/engine/schema"
	"svcd/fsm"
)

// The kernel: what modules use of the core besides registration
// (module.go). A module reads the replica through ReadAs, proposes its own
// commands with Propose and decodes them with DecodeCmd, and finds
// collections with Coll.

// Store is the node's state machine (reads of a module's own tables).
func (e *Engine) Store() *fsm.Store { return e.store }

// Now is the engine's clock: times a command carries are read here, before
// proposing, never inside an apply.
func (e *Engine) Now() time.Time { return e.now() }

// Logger is the engine's logger.
func (e *Engine) Logger() *slog.Logger { return e.log }

// DecodeCmd decodes a command's JSON payload with numbers kept exact; a
// payload that does not decode halts the state machine (fsm.ErrHalt).
func DecodeCmd[T any](cmd fsm.Command) (*T, error) { return decodeCmd[T](cmd) }

// RowFields are the collection's stored fields in row order (after id,
// created and updated): the auth system fields first.
func (ci *Coll) RowFields() []*FieldInfo { return ci.fields }

// AppendRecord appends the record of row as JSON, as a reader with admin
// rights (hidden fields shown) or without sees it.
func (ci *Coll) AppendRecord(buf []byte, row []any, admin bool) []byte {
	return ci.appendRecord(buf, row, admin, nil)
}

// Private reports a field never emitted (password hashes).
func (f *FieldInfo) Private() bool { return f.private }

// System reports an auth system field (email, password, ...).
func (f *FieldInfo) System() bool { return f.system }

// ColumnType is the SQLite column type of the field's stored value.
func (f *FieldInfo) ColumnType() schema.Column { return f.typ.Column(f.Field) }

// StoredValue turns a JSON-decoded command value back into the stored form
// for a column: the inverse of encoding a stored value in a command.
func StoredValue(col schema.Column, v any) (any, error) { return storedFromCommand(col, v) }

// Reading is a read of this replica's committed state as one principal,
// whose rights decide what it sees.
type Reading struct {
	e   *Engine
	src *readSource
	r   *fsm.Reader
}

// ReadAs runs fn in one read transaction of the replica as p.
func (e *Engine) ReadAs(ctx context.Context, p Principal, fn func(*Reading) error) error {
	return e.store.View(ctx, func(r *fsm.Reader) error {
		return fn(&Reading{e: e, src: e.replicaSource(r, p), r: r})
	})
}

// SQL is the read transaction, for a module's own tables.
func (rd *Reading) SQL() *fsm.Reader { return rd.r }

// Bypass reports whether the reader acts as an admin on ci: no rules, and
// hidden fields shown.
func (rd *Reading) Bypass(ci *Coll) bool { return rd.src.bypass(ci) }

// Record reads record id of ci as the reader may: ErrNotFound when it
// does not exist or the view rule hides it. fields and expand are the
// list parameters of that name ("" for none).
func (rd *Reading) Record(ci *Coll, id, fields, expand string) (*Record, error) {
	return rd.e.recs.getRecordIn(rd.src, ci, id, fields, expand)
}
