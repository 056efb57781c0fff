package files

import (
	"sort"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// The module keeps its metadata in step with the records, inside each
// change's transaction: a file whose name leaves its record (a delete of
// the record, a field set to null, a file replaced or removed, a file
// field removed from its collection, a collection dropped) loses its
// metadata row and gains a tombstone. Nothing here touches the bytes:
// the collector does, after the grace period, outside the state machine.

func (m *Files) registerHooks() {
	m.core.OnRecordWrite(engine.RecordHook{Name: "files", Apply: m.onRecordWrite})
	m.core.OnCollectionChange(engine.CollectionHook{Name: "files", Apply: m.onCollectionChange})
}

// onRecordWrite tombstones the files record w no longer names.
func (m *Files) onRecordWrite(tx *fsm.Tx, w *engine.RecordWrite) error {
	if w.Kind == engine.EvRecordCreate || !hasFileFields(w.Coll) {
		return nil
	}
	id := engine.AsString(w.Row[0])
	if w.Kind == engine.EvRecordDelete {
		return tombstone(tx, w.At, `collection_id = ? AND record_id = ?`, w.Coll.ID, id)
	}
	for i, f := range w.Coll.RowFields() {
		if f.Type != schema.FieldFile {
			continue
		}
		keep := storedNames(w.Row[3+i])
		rows, err := tx.Query(`SELECT name FROM _svc_files WHERE collection_id = ? AND record_id = ? AND field_id = ? ORDER BY name`,
			w.Coll.ID, id, f.ID)
		if err != nil {
			return err
		}
		var gone []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			if !contains(keep, n) {
				gone = append(gone, n)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, n := range gone {
			if err := tombstone(tx, w.At, `name = ?`, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// onCollectionChange tombstones the files of a dropped collection and of
// file fields a change removed (or turned into another type).
func (m *Files) onCollectionChange(tx *fsm.Tx, c engine.CollectionChange) error {
	switch {
	case c.Old == nil:
		return nil
	case c.New == nil:
		// The drop carries no time: 0 makes the collector count the grace
		// period from when it first sees the tombstone.
		return tombstone(tx, 0, `collection_id = ?`, c.Old.ID)
	}
	var gone []string
	for _, f := range c.Old.RowFields() {
		if f.Type != schema.FieldFile {
			continue
		}
		if nf, _ := fieldByID(c.New, f.ID); nf == nil {
			gone = append(gone, f.ID)
		}
	}
	sort.Strings(gone)
	for _, fid := range gone {
		if err := tombstone(tx, c.New.Updated, `collection_id = ? AND field_id = ?`, c.Old.ID, fid); err != nil {
			return err
		}
	}
	return nil
}

// tombstoneMeta are the metadata columns a tombstone keeps from version
// keepMetaSince.
const tombstoneMeta = `collection_id, record_id, field_id, original_name, size, mime, sha256, created`

// tombstone moves the metadata rows matching where to the tombstones, in
// name order (the ids they get are the same on every replica). From
// internal version keepMetaSince a tombstone keeps the file's metadata, so
// a restore can bring the file back (restore.go).
func tombstone(tx *fsm.Tx, at int64, where string, args ...any) error {
	v, err := engine.InternalVersionTx(tx)
	if err != nil {
		return err
	}
	cols, sel := `name, driver, deleted_at`, `name, driver, ?`
	if v >= keepMetaSince {
		cols, sel = cols+`, `+tombstoneMeta, sel+`, `+tombstoneMeta
	}
	ins := `INSERT INTO _svc_files_deleted (` + cols + `) SELECT ` + sel + ` FROM _svc_files WHERE ` + where + ` ORDER BY name`
	if _, err := tx.Exec(ins, append([]any{at}, args...)...); err != nil {
		return err
	}
	_, err = tx.Exec(`DELETE FROM _svc_files WHERE `+where, args...)
	return err
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
