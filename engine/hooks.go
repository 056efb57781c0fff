package engine

import "svcd/fsm"

// Hooks let a module keep its own state in step with records and
// collections, inside the command's transaction: what a hook writes
// commits or rolls back with the change. A hook's error fails the command
// (a domain *Error is the caller's answer; anything else is a storage
// failure). Hooks run in the order they were registered and must be as
// deterministic as the rest of the apply.

// RecordWrite is one record change as it leaves an apply: every create,
// update and delete of a record (cascades and account updates included).
type RecordWrite struct {
	Kind string // EvRecordCreate, EvRecordUpdate or EvRecordDelete
	Coll *Coll
	// Row is the record as stored after the change (before it, for a
	// delete): id, created, updated, then Coll.RowFields().
	Row []any
	At  int64  // the command's time (unix seconds)
	By  *Actor // who made it; nil: the system
}

// RecordHook sees every record write (recordWritten).
type RecordHook struct {
	Name  string
	Apply func(tx *fsm.Tx, w *RecordWrite) error
}

// OnRecordWrite registers h.
func (e *Engine) OnRecordWrite(h RecordHook) {
	e.reg.mustOpen("record hook " + h.Name)
	e.reg.onRecord = append(e.reg.onRecord, h)
}

// CollectionChange is a collection created (Old nil), changed, or deleted
// (New nil), as the apply sees it: after the core's own checks and DDL,
// with the collection's row written.
type CollectionChange struct {
	Old, New *Coll
}

// CollectionHook sees every collection change. Last hooks run after all
// the others, as the very last fallible step of the command: DDL that a
// savepoint rolled back would leave broken (FTS5 tables; see
// engine/search) belongs there, and two Last hooks must not both be
// able to fail.
type CollectionHook struct {
	Name  string
	Last  bool
	Apply func(tx *fsm.Tx, c CollectionChange) error
}

// OnCollectionChange registers h.
func (e *Engine) OnCollectionChange(h CollectionHook) {
	e.reg.mustOpen("collection hook " + h.Name)
	e.reg.onColl = append(e.reg.onColl, h)
}

// collectionChanged runs the collection hooks, the Last ones last.
func (e *Engine) collectionChanged(tx *fsm.Tx, c CollectionChange) error {
	for _, last := range []bool{false, true} {
		for _, h := range e.reg.onColl {
			if h.Last != last {
				continue
			}
			if err := h.Apply(tx, c); err != nil {
				return err
			}
		}
	}
	return nil
}
