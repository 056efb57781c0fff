package engine

import (
	"svcd/fsm"
)

// RecordWritten runs the record-write hooks (history, search, the
// modules') and emits the record event for a change a module's command
// made to row of ci, in its transaction.
func (e *Engine) RecordWritten(tx *fsm.Tx, kind string, ci *Coll, row []any, at int64, actor *Actor) error {
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
