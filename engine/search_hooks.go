package engine

import (
	"svcd/engine/schema"
	"svcd/fsm"
)

// registerSearchHooks keeps the full-text index in step: each record
// write updates its row, and a collection's index tables follow its
// searchable fields (built, rebuilt or dropped) as the command's last
// fallible step (see ftsRebuild).
func (e *Engine) registerSearchHooks() {
	e.OnRecordWrite(RecordHook{Name: "search", Apply: func(tx *fsm.Tx, w *RecordWrite) error {
		return ftsSync(tx, w.Kind, w.Coll, w.Row)
	}})
	e.OnCollectionChange(CollectionHook{Name: "search", Last: true, Apply: func(tx *fsm.Tx, c CollectionChange) error {
		switch {
		case c.New == nil:
			return ftsDrop(tx, c.Old.ID)
		case c.Old != nil && c.New.Type == schema.TypeView:
			return nil
		}
		return ftsRebuild(tx, c.Old, c.New)
	}})
}
