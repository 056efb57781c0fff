package files

import (
	"context"
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// A history restore (engine/history) puts back the files a snapshot
// names. A name the record still holds stays. A name removed since is
// brought back while its tombstone is younger than the grace period
// (files.delete_grace_seconds): the tombstone kept the file's metadata
// (from internal version keepMetaSince), the apply moves it back to the
// file's row, and the collector, which only removes the bytes of
// tombstones no row names, keeps them. A name whose bytes may be gone
// (older than the grace period less restoreMargin, purged, or unreadable
// where the restore was proposed) is left out and reported: the restore
// succeeds with the files that could be restored.

// restoreMargin is how much younger than the grace period a tombstone
// must be for its file to come back, so that the collector of a node
// whose clock runs ahead, removing the bytes at the end of the grace
// period, never races a restore (at most half the grace period).
const restoreMargin = 60

// RestoreRecord applies a history snapshot to record id of coll as p's
// update, in one command under If-Match ifMatch: body holds the
// snapshot's other fields as a JSON update carries them; files holds, by
// field name, the names each file field held then (a field absent from
// files keeps its files). It answers the record and, by field name, the
// names that could not be restored (their bytes may be gone).
func (m *Files) RestoreRecord(ctx context.Context, p engine.Principal, coll, id string, body map[string]any,
	files map[string][]string, ifMatch string) (*engine.Record, map[string][]string, uint64, error) {
	rs := m.core.Records()
	ci, err := rs.Writable(coll)
	if err != nil {
		return nil, nil, 0, err
	}
	admin, err := engine.WriteRights(p, ci)
	if err != nil {
		return nil, nil, 0, err
	}
	var changes []fieldChange
	var asked []*engine.FieldInfo
	for _, f := range ci.RowFields() {
		want, ok := files[f.Name]
		if !ok || f.Type != schema.FieldFile || f.System() {
			continue
		}
		readable, err := m.restorable(ctx, ci, id, f, want)
		if err != nil {
			return nil, nil, 0, err
		}
		changes = append(changes, fieldChange{Field: f.ID, Clear: true, Restore: readable})
		asked = append(asked, f)
	}
	res, idx, err := m.proposeChange(ctx, p, coll, id, ifMatch, body, changes, nil, false)
	if err != nil {
		return nil, nil, idx, goneError(err, files)
	}
	if ci, err = rs.Writable(coll); err != nil {
		return nil, nil, idx, err
	}
	row := res.(engine.Row)
	missing := map[string][]string{}
	for _, f := range asked {
		_, i := fieldByID(ci, f.ID)
		var now []string
		if i >= 0 {
			now = storedNames(row[3+i])
		}
		for _, n := range files[f.Name] {
			if !contains(now, n) {
				missing[f.Name] = append(missing[f.Name], n)
			}
		}
	}
	return rs.Render(ci, row, admin), missing, idx, nil
}

// restorable is the names of want that a restore may propose for field f
// of record id: those the record holds, and those whose tombstone is on
// this replica and whose bytes this node can open (fetching them from a
// peer if its store does that). The apply decides again, on the
// tombstones (restoreNames).
func (m *Files) restorable(ctx context.Context, ci *engine.Coll, id string, f *engine.FieldInfo, want []string) ([]string, error) {
	type state struct {
		held   bool
		driver string
	}
	states := make([]state, len(want))
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		for i, n := range want {
			var held int
			err := r.QueryRow(`SELECT count(*) FROM _svc_files WHERE name = ? AND collection_id = ? AND record_id = ? AND field_id = ?`,
				n, ci.ID, id, f.ID).Scan(&held)
			if err != nil {
				return err
			}
			if held > 0 {
				states[i].held = true
				continue
			}
			err = r.QueryRow(`SELECT driver FROM _svc_files_deleted WHERE name = ? ORDER BY id DESC LIMIT 1`, n).Scan(&states[i].driver)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for i, n := range want {
		switch {
		case states[i].held:
			out = append(out, n)
		case states[i].driver != "" && m.blobReadable(ctx, states[i].driver, n):
			out = append(out, n)
		}
	}
	return out, nil
}

// blobReadable reports whether this node can open stored name in
// driver's store.
func (m *Files) blobReadable(ctx context.Context, driver, name string) bool {
	store, err := m.stores.Store(ctx, driver)
	if err != nil {
		return false
	}
	b, err := store.Open(ctx, name)
	if err != nil {
		return false
	}
	b.Close()
	return true
}

// restoreSince is the RestoreSince of a restore proposed at now: the
// oldest deletion time (exclusive) whose bytes are surely still kept.
func (m *Files) restoreSince(now int64) int64 {
	grace := m.grace()
	return now - grace + min(restoreMargin, grace/2)
}

// goneError says why a restore left a required file field blank: the
// files it named (files, by field name) are gone. Other errors are
// returned as they are.
func goneError(err error, files map[string][]string) error {
	e := engine.AsError(err)
	if e == nil || e.Kind != engine.KindValidation {
		return err
	}
	details := make(map[string]string, len(e.Details))
	changed := false
	for k, v := range e.Details {
		msg, _ := v.(string)
		if msg == msgBlank && len(files[k]) > 0 {
			msg, changed = msgBlank+": the files it held then are gone (removed more than files.delete_grace_seconds ago)", true
		}
		details[k] = msg
	}
	if !changed {
		return err
	}
	return engine.ValidationError(details)
}

// restoreNames appends to names (a field's names after the change's other
// parts) the names of restore the apply can give field fid of record id
// of collection coll: those it held before the change (current), and
// those whose tombstone, deleted after since, brings them back. The
// others stay gone.
func restoreNames(tx *fsm.Tx, coll, id, fid string, current, names, restore []string, since int64) ([]string, error) {
	for _, n := range restore {
		if contains(names, n) {
			continue
		}
		if contains(current, n) {
			names = append(names, n)
			continue
		}
		ok, err := untombstone(tx, coll, id, fid, n, since)
		if err != nil {
			return nil, err
		}
		if ok {
			names = append(names, n)
		}
	}
	return names, nil
}

// untombstone makes stored name a file of field fid of record id of
// collection coll again, from the newest tombstone that kept its metadata
// for that field and was made after since: the file's row comes back and
// its tombstones go, so the collector keeps its bytes. It reports whether
// it did; a name no such tombstone holds (older, purged once its bytes
// were removed, made before tombstones kept metadata, another record's)
// stays gone.
func untombstone(tx *fsm.Tx, coll, id, fid, name string, since int64) (bool, error) {
	if v, err := engine.InternalVersionTx(tx); err != nil || v < keepMetaSince {
		return false, err
	}
	var f fileRow
	err := tx.QueryRow(`SELECT driver, original_name, size, mime, sha256, created FROM _svc_files_deleted
		WHERE name = ? AND collection_id = ? AND record_id = ? AND field_id = ? AND deleted_at > ? ORDER BY id DESC LIMIT 1`,
		name, coll, id, fid, since).Scan(&f.Driver, &f.Original, &f.Size, &f.MIME, &f.SHA256, &f.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var live int
	if err := tx.QueryRow(`SELECT count(*) FROM _svc_files WHERE name = ?`, name).Scan(&live); err != nil || live > 0 {
		return false, err
	}
	if _, err := tx.Exec(`INSERT INTO _svc_files (`+fileCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		name, coll, id, fid, f.Original, f.Size, f.MIME, f.SHA256, f.Driver, f.Created); err != nil {
		return false, err
	}
	_, err = tx.Exec(`DELETE FROM _svc_files_deleted WHERE name = ?`, name)
	return err == nil, err
}
