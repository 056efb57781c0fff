package engine

import (
	"svcd/fsm"
)

// recordWritten is the one place a record change leaves an apply: every
// create, update and delete of a record (cascades and account updates
// included) passes here, inside the command's transaction, with the row
// as stored after the change (before it, for a delete), the command's
// time and who made it (nil: the system). It emits the realtime event and
// runs the record hooks (hooks.go) of the modules that keep their state in
// step with records (history, the search index, account state), so that
// it commits or rolls back with the change.
func (e *Engine) recordWritten(tx *fsm.Tx, kind string, ci *Coll, row []any, at int64, actor *Actor) error {
	tx.Emit(fsm.Event{Kind: kind, Subject: ci.ID, Data: &RecordChange{CollectionID: ci.ID, CollectionName: ci.Name, Row: row}})
	if len(e.reg.onRecord) == 0 {
		return nil
	}
	w := &RecordWrite{Kind: kind, Coll: ci, Row: row, At: at, By: actor}
	for _, h := range e.reg.onRecord {
		if err := h.Apply(tx, w); err != nil {
			return err
		}
	}
	return nil
}
