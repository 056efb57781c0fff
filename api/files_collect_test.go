package api_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/fsm"
)

// TestFilesCollector: removed files keep their bytes for the grace period
// (files.delete_grace_seconds), then the collector removes them; the
// files of a deleted record, of a removed field and of a dropped
// collection all go that way, and bytes no row names (a failed upload)
// are swept once they are older than the grace period.
func TestFilesCollector(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	x := newFilesFixture(t, s)
	s.CreateCollection(t, coll("drop", "base", []map[string]any{f("a", "file"), f("b", "file")}, "view_rule", ""))
	admin := s.AdminHeaders(t, nil)
	stored := func(name string) bool {
		_, err := os.Stat(filepath.Join(s.DataDir, "storage", name))
		return err == nil
	}
	up := func(coll, id, field string) string {
		v := uploadOK(t, s, coll, id, field, admin, file("file", "f.txt", []byte("bytes of "+field)))
		if l, ok := v.([]any); ok {
			v = l[0]
		}
		return apitest.Obj(t, v)["filename"].(string)
	}
	collect := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stack.Files.Collector().Collect(ctx, true); err != nil {
			t.Fatalf("collect: %v", err)
		}
	}

	rec2 := s.CreateRecord(t, "papers", map[string]any{"title": "gone soon"})["id"].(string)
	ofRecord := up("papers", rec2, "many")
	replaced := up("papers", x.rec, "many")
	s.MustAdmin(t, 204, "DELETE", "/api/v1/papers/"+rec2, nil)
	s.MustAdmin(t, 204, "DELETE", "/api/v1/files/papers/"+x.rec+"/many/"+replaced, nil)
	d1 := s.CreateRecord(t, "drop", map[string]any{})["id"].(string)
	ofField := up("drop", d1, "b")
	ofColl := up("drop", d1, "a")
	kept := up("papers", x.rec, "many")
	cur := s.MustAdmin(t, 200, "GET", collectionsURL+"/drop", nil)
	fields := apitest.List(t, apitest.Obj(t, cur["data"])["fields"])
	s.MustAdmin(t, 200, "PATCH", collectionsURL+"/drop", map[string]any{"fields": fields[:1]})
	if st, _, _ := download(t, s, fileURL(ofField), admin); st != 404 {
		t.Errorf("a removed field's file downloads: %d", st)
	}
	s.MustAdmin(t, 204, "DELETE", collectionsURL+"/drop", nil)
	if st, _, _ := download(t, s, fileURL(ofColl), admin); st != 404 {
		t.Errorf("a dropped collection's file downloads: %d", st)
	}
	gone := []string{ofRecord, replaced, ofField, ofColl}

	// Within the grace period the bytes stay (a restored backup may name
	// them again).
	collect()
	for _, n := range append(gone, kept) {
		if !stored(n) {
			t.Errorf("%s left before the grace period", n)
		}
	}
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.delete_grace_seconds": "0"})
	collect()
	for _, n := range gone {
		if stored(n) {
			t.Errorf("%s is still stored after the grace period (%d of %v)", n, slices.Index(gone, n), gone)
		}
	}
	if !stored(kept) {
		t.Errorf("a referenced file was collected")
	}
	var tombstones int
	if err := s.Stack.Store.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM _svc_files_deleted`).Scan(&tombstones)
	}); err != nil {
		t.Fatal(err)
	}
	if tombstones != 0 {
		t.Errorf("%d tombstones left after the collector removed their bytes", tombstones)
	}
	if st, body, _ := download(t, s, fileURL(kept), admin); st != 200 || string(body) != "bytes of many" {
		t.Errorf("the kept file: %d %q", st, body)
	}

	// Bytes no row names (an upload whose command never committed) are
	// swept; with a grace period they wait.
	orphan := filepath.Join(s.DataDir, "storage", "00000000-0000-4000-8000-000000000000.txt")
	if err := os.WriteFile(orphan, []byte("orphan"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The temporary file of a push from a peer that was cut off
	// (cluster/blobs names it "<key>.<hex>.tmp") goes too.
	abandoned := filepath.Join(s.DataDir, "storage", "00000000-0000-4000-8000-000000000001.txt.0123456789abcdef.tmp")
	if err := os.WriteFile(abandoned, []byte("half a push"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(s.DataDir, "storage", "not-ours.txt")
	if err := os.WriteFile(foreign, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	collect()
	if _, err := os.Stat(orphan); err == nil {
		t.Errorf("an unreferenced blob survived the sweep")
	}
	if _, err := os.Stat(abandoned); err == nil {
		t.Errorf("an abandoned push's temporary file survived the sweep")
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("the sweep removed a key the module never writes: %v", err)
	}
	if !stored(kept) {
		t.Errorf("the sweep removed a referenced file")
	}
}
