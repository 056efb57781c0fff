package api_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// restoreGrace is files.delete_grace_seconds in the restore tests.
const restoreGrace = 3600

// TestFilesHistoryRestore: a history restore brings back the files its
// snapshot names. A file deleted less than files.delete_grace_seconds ago
// comes back (the record names it again, it downloads with its bytes and
// original name, and the collector keeps it); the files the record holds
// instead are removed as by any update. A file deleted longer ago (its
// tombstone still there, or its bytes collected and the tombstone purged)
// is left out: the restore succeeds and lists it in missing_files. A
// required file field whose files are all gone refuses the restore (422)
// and changes nothing. For each storage driver.
func TestFilesHistoryRestore(t *testing.T) {
	t.Parallel()
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		clock := newClock()
		s := apitest.Start(t, apitest.Options{Clock: clock.Now})
		testFilesRestore(t, s, clock, func(name string) bool {
			_, err := os.Stat(filepath.Join(s.DataDir, "storage", name))
			return err == nil
		})
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		peer := startGofakes3(t)
		clock := newClock()
		s := apitest.Start(t, apitest.Options{Clock: clock.Now})
		peer.useS3(t, s)
		testFilesRestore(t, s, clock, func(name string) bool { return peer.object(t, name) != nil })
	})
}

func testFilesRestore(t *testing.T, s *apitest.Server, clock *apitest.Clock, stored func(name string) bool) {
	admin := s.AdminHeaders(t, nil)
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.delete_grace_seconds": strconv.Itoa(restoreGrace)})
	s.CreateCollection(t, public(coll("archive", "base", []map[string]any{
		f("title", "text"), f("cover", "file"), f("scans", "file", "multiple", true), f("badge", "file", "required", true),
	}, "history_enabled", true)))
	content := map[string][]byte{} // stored name -> bytes
	names := func(v any) []string {
		var out []string
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				out = append(out, e.(string))
			}
		}
		return out
	}
	create := func(title string, parts ...formPart) map[string]any {
		t.Helper()
		res, out := sendForm(t, s, http.MethodPost, "/api/v1/archive", admin, append([]formPart{value("title", title)}, parts...)...)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %d %s", title, res.StatusCode, out)
		}
		rec := apitest.Obj(t, apitest.DecodeMap(t, out)["data"])
		for _, p := range parts {
			for _, n := range names(rec[p.name]) {
				if _, ok := content[n]; !ok {
					content[n] = p.content
					break
				}
			}
		}
		return rec
	}
	upload := func(id, field, original string, b []byte) string {
		t.Helper()
		v := uploadOK(t, s, "archive", id, field, admin, file("file", original, b))
		if l, ok := v.([]any); ok {
			v = l[0]
		}
		n := apitest.Obj(t, v)["filename"].(string)
		content[n] = b
		return n
	}
	get := func(id string) map[string]any {
		t.Helper()
		r, _ := getRecord(t, s, "archive", id)
		return r
	}
	// downloads checks that each name downloads with its bytes (want) or
	// is 404.
	downloads := func(want bool, ns ...string) {
		t.Helper()
		for _, n := range ns {
			st, body, res := download(t, s, fileURL(n), admin)
			switch {
			case want && (st != http.StatusOK || !bytes.Equal(body, content[n])):
				t.Errorf("download %s: %d %q, want 200 %q", n, st, body, content[n])
			case want && !strings.Contains(res.Header.Get("Content-Disposition"), "filename=orig-"):
				t.Errorf("download %s: Content-Disposition %q lost the original name", n, res.Header.Get("Content-Disposition"))
			case !want && st != http.StatusNotFound:
				t.Errorf("download %s: %d, want 404", n, st)
			}
		}
	}
	restore := func(id string, at int64, want int) map[string]any {
		t.Helper()
		res, out := s.Do(t, http.MethodPost, "/api/v1/archive/"+id+"/restore?at="+strconv.FormatInt(at, 10), nil, admin)
		apitest.CheckCommon(t, res, out)
		if res.StatusCode != want {
			t.Fatalf("restore %s at %d: %d %s, want %d", id, at, res.StatusCode, out, want)
		}
		return apitest.DecodeMap(t, out)
	}
	missing := func(out map[string]any) []string {
		var got []string
		if out["missing_files"] == nil {
			return nil
		}
		for _, m := range apitest.List(t, out["missing_files"]) {
			o := apitest.Obj(t, m)
			got = append(got, o["field"].(string)+":"+o["filename"].(string))
		}
		return got
	}
	collect := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stack.Files.Collector().Collect(ctx, true); err != nil {
			t.Fatalf("collect: %v", err)
		}
	}
	// lastAt is the time of the newest history entry of record id (a
	// record's changes within one second get later times: its updated
	// time is strictly monotonic).
	lastAt := func(id string) int64 {
		t.Helper()
		h := getHistory(t, s, "admin", "/api/v1/archive/"+id+"/history?perPage=1", 200)
		return int64(h.Data.Data[0].At)
	}
	same := func(what string, got any, want []string) {
		t.Helper()
		if g := names(got); !reflect.DeepEqual(g, want) && !(len(g) == 0 && len(want) == 0) {
			t.Errorf("%s: %v, want %v", what, g, want)
		}
	}

	// t0: two records with their files.
	nextSecond(clock)
	rec := create("v1", file("cover", "orig-a.png", []byte("cover A")), file("scans", "orig-s1.txt", []byte("scan 1")),
		file("scans", "orig-s2.txt", []byte("scan 2")), file("badge", "orig-b.txt", []byte("badge B")))
	id := rec["id"].(string)
	coverA, badge := rec["cover"].(string), rec["badge"].(string)
	scans := names(rec["scans"])
	s1, s2 := scans[0], scans[1]
	other := create("other", file("badge", "orig-b1.txt", []byte("badge B1")))
	otherID, badge1 := other["id"].(string), other["badge"].(string)
	t0, otherT0 := lastAt(id), lastAt(otherID)

	// t1: the cover replaced, a scan deleted and another added, the title
	// changed; the other record's required badge replaced.
	nextSecond(clock)
	coverA2 := upload(id, "cover", "orig-a2.png", []byte("cover A2"))
	s.MustAdmin(t, 204, "DELETE", "/api/v1/files/archive/"+id+"/scans/"+s1, nil)
	s3 := upload(id, "scans", "orig-s3.txt", []byte("scan 3"))
	s.MustAdmin(t, 200, "PATCH", "/api/v1/archive/"+id, map[string]any{"title": "v2"})
	badge2 := upload(otherID, "badge", "orig-b2.txt", []byte("badge B2"))
	downloads(false, coverA, s1, badge1)
	t1 := lastAt(id)

	// t2, within the grace period: the files of t0 come back.
	clock.Set(time.Unix(t1+1, 0))
	out := restore(id, t0, 200)
	t2 := lastAt(id)
	if m := missing(out); m != nil {
		t.Errorf("a restore within the grace period misses %v", m)
	}
	got := apitest.Obj(t, out["data"])
	if got["title"] != "v1" {
		t.Errorf("restored title %v", got["title"])
	}
	same("restored cover", got["cover"], []string{coverA})
	same("restored scans", got["scans"], []string{s1, s2})
	same("restored badge", got["badge"], []string{badge})
	downloads(true, coverA, s1, s2, badge)
	downloads(false, coverA2, s3) // what the record held instead is removed
	h := getHistory(t, s, "admin", "/api/v1/archive/"+id+"/history", 200)
	if e := h.Data.Data[0]; e.Op != "update" || e.ActorType != "admin" || e.Snapshot["cover"] != coverA {
		t.Errorf("the restore's history entry: %+v", e)
	}

	// Past the grace period of the files removed at t2 (their tombstones
	// are still there: the collector has not run): the snapshot of t1
	// comes back without them, and says so.
	clock.Advance(2 * restoreGrace * time.Second)
	out = restore(id, t1, 200)
	if m, want := missing(out), []string{"cover:" + coverA2, "scans:" + s3}; !reflect.DeepEqual(m, want) {
		t.Errorf("missing_files %v, want %v", m, want)
	}
	got = apitest.Obj(t, out["data"])
	if got["title"] != "v2" || got["cover"] != nil {
		t.Errorf("restored without the missing files: title %v cover %v", got["title"], got["cover"])
	}
	same("scans restored without the missing one", got["scans"], []string{s2})
	same("badge", got["badge"], []string{badge})
	downloads(false, coverA2, s3, coverA, s1)
	downloads(true, s2, badge)

	// The collector removes the bytes of the files removed at t2, not
	// those a restore brought back, nor those removed at t3 (their grace
	// period runs).
	collect()
	for n, want := range map[string]bool{coverA2: false, s3: false, badge2: true, s2: true, badge: true, coverA: true, s1: true} {
		if stored(n) != want {
			t.Errorf("%s stored: %v, want %v", n, stored(n), want)
		}
	}
	// Collected and purged: still reported.
	if m, want := missing(restore(id, t1, 200)), []string{"cover:" + coverA2, "scans:" + s3}; !reflect.DeepEqual(m, want) {
		t.Errorf("missing_files once collected %v, want %v", m, want)
	}
	// What the restore at t3 removed comes back within its grace period.
	out = restore(id, t2, 200)
	if m := missing(out); m != nil {
		t.Errorf("restoring the files a restore removed misses %v", m)
	}
	same("cover back", apitest.Obj(t, out["data"])["cover"], []string{coverA})
	downloads(true, coverA, s1, s2, badge)

	// A required field whose files are all gone refuses the restore.
	res, body := s.Do(t, http.MethodPost, "/api/v1/archive/"+otherID+"/restore?at="+strconv.FormatInt(otherT0, 10), nil, admin)
	apitest.CheckCommon(t, res, body)
	if res.StatusCode != 422 || !strings.Contains(string(body), `"badge":"cannot be blank: the files it held then are gone`) {
		t.Errorf("restore naming only gone files of a required field: %d %s", res.StatusCode, body)
	}
	same("the refused restore changed nothing", get(otherID)["badge"], []string{badge2})
	downloads(true, badge2)
}
