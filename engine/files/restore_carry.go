package files

import (
	"svcd/engine"
	"svcd/fsm"
)

// A restore (engine/restore.go) keeps the one-time file tokens spent since
// the backup spent: the spent ids are the union of both databases. The
// files' metadata and tombstones are the backup's: a tombstone of a file
// deleted since the backup is not carried, or the collector would remove
// bytes a restored record names. (Bytes the collector removed since the
// backup are gone: docs/operations.md says how to back the store up.)
func (m *Files) registerRestoreCarrier() {
	m.core.OnRestore(engine.RestoreCarrier{Name: "files", Carry: func(tx *fsm.Tx, _ engine.RestoreContext) error {
		return engine.UnionTable(tx, "_svc_file_tokens")
	}})
}
