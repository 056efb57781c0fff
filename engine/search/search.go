// Package search is the engine's search module: the full-text index of
// searchable fields (SQLite FTS5) kept in step with every record write and
// collection change, the search= list parameter, and vector search
// (nearVector) over vector fields with its setting vector.max_candidates.
//
// The core's record list asks it through the engine.Searcher it registers
// (engine/list_extension.go); a core without it refuses both parameters.
// Full-text search needs the sqlite_fts5 build tag (fts5_required.go).
package search

import (
	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Search keeps the full-text index and answers the search and vector
// search of record lists.
type Search struct {
	core *engine.Engine
}

// New wires the search module to core: the index hooks, the setting and
// the list's search provider.
func New(core *engine.Engine) *Search {
	s := &Search{core: core}
	core.DefineSettings(engine.SettingDef{Key: "vector.max_candidates", Default: "100000"})
	// Each record write updates its index row, and a collection's index
	// tables follow its searchable fields (built, rebuilt or dropped) as
	// the command's last fallible step (see ftsRebuild).
	core.OnRecordWrite(engine.RecordHook{Name: "search", Apply: func(tx *fsm.Tx, w *engine.RecordWrite) error {
		return ftsSync(tx, w.Kind, w.Coll, w.Row)
	}})
	core.OnCollectionChange(engine.CollectionHook{Name: "search", Last: true, Apply: func(tx *fsm.Tx, c engine.CollectionChange) error {
		switch {
		case c.New == nil:
			return ftsDrop(tx, c.Old.ID)
		case c.Old != nil && c.New.Type == schema.TypeView:
			return nil
		}
		return ftsRebuild(tx, c.Old, c.New)
	}})
	core.SetSearcher(s)
	return s
}
