package engine

import (
	"svcd/engine/schema"
	"svcd/fsm"
)

// recordWritten is the one place a record change leaves an apply: every
// create, update and delete of a record (cascades and account updates
// included) passes here, inside the command's transaction, with the row
// as stored after the change (before it, for a delete), the command's
// time and who made it (nil: the system). It emits the realtime event;
// what else must stay in step with records is kept here too, so that it
// commits or rolls back with the change.
func (e *Engine) recordWritten(tx *fsm.Tx, kind string, ci *collInfo, row []any, at int64, actor *Actor) error {
	tx.Emit(fsm.Event{Kind: kind, Subject: ci.ID, Data: &RecordChange{CollectionID: ci.ID, CollectionName: ci.Name, Row: row}})
	if kind == EvRecordDelete && ci.Type == schema.TypeAuth {
		if err := dropAccountState(tx, ci.ID, asString(row[0])); err != nil {
			return err
		}
	}
	if ci.Type == schema.TypeAuth {
		if err := accountLifecycle(tx, kind, ci, row, at); err != nil {
			return err
		}
	}
	if ci.HistoryEnabled {
		if err := writeHistory(tx, kind, ci, row, at, actor); err != nil {
			return err
		}
	}
	if err := ftsSync(tx, kind, ci, row); err != nil {
		return err
	}
	return nil
}
