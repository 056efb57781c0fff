package files

import (
	"context"
	"database/sql"
	"log/slog"
	"testing"
	"time"

	"svcd/engine"
	"svcd/fsm"
	"svcd/fsm/fsmtest"
)

// TestRestoreApplyAcrossVersions drives the files module's change command
// on a real store, entry after entry as a log delivers them, across the
// internal schema version that made tombstones keep the metadata
// (keepMetaSince): a tombstone written before it (as an old entry
// replayed by this binary writes it) has no metadata and never brings its
// file back; one written after it does, with the file's metadata as it
// was, while it is younger than RestoreSince; the restored name leaves the
// tombstones; a name of another field or record stays gone.
func TestRestoreApplyAcrossVersions(t *testing.T) {
	ctx := context.Background()
	store := fsmtest.Open(t)
	now := time.Unix(2_000_000_000, 0)
	e, err := engine.New(engine.Options{Store: store, Clock: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	New(e, Options{})
	log := &fsmtest.Log{S: store}
	e.SetProposer(log)
	// The internal tables as a binary of version 6 left them.
	if _, _, err := log.Apply(ctx, fsm.Command{Type: 1, Version: 1,
		Payload: []byte(`{"version":6,"etag_key":"000102030405060708090a0b0c0d0e0f"}`)}); err != nil {
		t.Fatalf("migrate to 6: %v", err)
	}
	admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner}
	if _, _, err := e.Schema().CreateCollection(ctx, []byte(`{"name":"docs_r","type":"base",
		"fields":[{"name":"a","type":"file","multiple":true},{"name":"b","type":"file"}]}`)); err != nil {
		t.Fatal(err)
	}
	rec, _, err := e.Records().CreateRecord(ctx, admin, "docs_r", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	id := string(rec.JSON[7:22]) // {"id":"<15 characters>"
	ci := e.Coll("docs_r")
	fa, _ := fileField(ci, "a")
	fb, _ := fileField(ci, "b")
	meta := func(n int, f *engine.FieldInfo) fileMeta {
		return fileMeta{Name: "00000000-0000-4000-8000-00000000000" + string(rune('0'+n)) + ".txt", Field: f.ID,
			Original: "orig.txt", Size: int64(n), MIME: "text/plain", SHA256: "digest", Driver: "local"}
	}
	change := func(c changeCmd) []string {
		t.Helper()
		ci := e.Coll("docs_r")
		c.Coll, c.Ver, c.Admin, c.ID, c.Now, c.Required = ci.ID, ci.Version, true, id, now.Unix(), true
		res, _, err := e.Propose(ctx, cmdChange, c)
		if err != nil {
			t.Fatalf("change %+v: %v", c.Changes, err)
		}
		return storedNames(res.(engine.Row)[3])
	}
	add := func(f fileMeta) {
		change(changeCmd{Changes: []fieldChange{{Field: f.Field, Add: []string{f.Name}}}, Files: []fileMeta{f}})
	}
	remove := func(f fileMeta) {
		change(changeCmd{Changes: []fieldChange{{Field: f.Field, Remove: []string{f.Name}}}})
	}
	restore := func(since int64, names ...string) []string {
		return change(changeCmd{RestoreSince: since, Changes: []fieldChange{{Field: fa.ID, Clear: true, Restore: names}}})
	}
	// tombstones counts name's tombstones.
	tombstones := func(name string) int {
		t.Helper()
		var n int
		if err := store.View(ctx, func(r *fsm.Reader) error {
			return r.QueryRow(`SELECT count(*) FROM _svc_files_deleted WHERE name = ?`, name).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// keptRecord is the record name's newest tombstone kept (NULL when it
	// kept no metadata); from version 7 only.
	keptRecord := func(name string) sql.NullString {
		t.Helper()
		var rec sql.NullString
		if err := store.View(ctx, func(r *fsm.Reader) error {
			return r.QueryRow(`SELECT record_id FROM _svc_files_deleted WHERE name = ? ORDER BY id DESC LIMIT 1`, name).Scan(&rec)
		}); err != nil {
			t.Fatal(err)
		}
		return rec
	}

	old := meta(1, fa)
	add(old)
	remove(old)
	if tombstones(old.Name) != 1 {
		t.Fatal("no tombstone for a file removed at version 6")
	}
	if err := e.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := keptRecord(old.Name); rec.Valid {
		t.Fatalf("the version-6 tombstone kept a record after the migration: %v", rec)
	}
	if got := restore(0, old.Name); len(got) != 0 {
		t.Errorf("a tombstone without metadata brought its file back: %v", got)
	}

	kept, other := meta(2, fa), meta(3, fb)
	add(kept)
	add(other)
	now = now.Add(time.Hour)
	remove(kept)
	change(changeCmd{Changes: []fieldChange{{Field: fb.ID, Clear: true}}})
	if rec := keptRecord(kept.Name); rec.String != id {
		t.Fatalf("a version-7 tombstone kept record %v, want %s", rec, id)
	}
	deletedAt := now.Unix()
	if got := restore(deletedAt, kept.Name); len(got) != 0 {
		t.Errorf("a tombstone not younger than RestoreSince brought its file back: %v", got)
	}
	// The restore above removed nothing (the field was empty); the
	// tombstone is still there for the next one.
	if got := restore(deletedAt-1, kept.Name, other.Name, "00000000-0000-4000-8000-000000000009.txt"); len(got) != 1 || got[0] != kept.Name {
		t.Fatalf("restored %v, want only %s (the other field's file and an unknown name stay gone)", got, kept.Name)
	}
	if tombstones(kept.Name) != 0 {
		t.Error("the restored file still has a tombstone (the collector would remove its bytes)")
	}
	var back *fileRow
	if err := store.View(ctx, func(r *fsm.Reader) error {
		var err error
		back, err = readFile(readerRow(r), kept.Name)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if back == nil || back.fileMeta != kept || back.RecordID != id || back.CollectionID != ci.ID {
		t.Errorf("the restored file's metadata: %+v, want %+v of record %s", back, kept, id)
	}
	if tombstones(other.Name) != 1 {
		t.Error("the other field's file left its tombstone")
	}
}
