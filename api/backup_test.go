package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestBackupDownload: GET /admin/backup answers the node's database as a
// plain SQLite file that passes integrity_check and holds the applied
// index its headers name; ?gzip=1 gives a .db.gz file, Accept-Encoding:
// gzip a gzip content coding; each download is in the audit log.
func TestBackupDownload(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	tok := s.AdminToken(t)
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	for i := range 5 {
		s.CreateRecord(t, "posts", map[string]any{"title": fmt.Sprintf("post %d", i)})
	}
	plain := downloadBackup(t, s, tok, "", nil)
	if !bytes.HasPrefix(plain.data, []byte("SQLite format 3\x00")) {
		t.Fatalf("not an SQLite file: %q", plain.data[:16])
	}
	h := plain.header
	if h.Get("Content-Type") != "application/vnd.sqlite3" || h.Get("Content-Length") != fmt.Sprint(len(plain.data)) ||
		!strings.HasPrefix(h.Get("Content-Disposition"), "attachment; filename=svcd-backup-") || h.Get("X-Svc-Schema-Version") == "" ||
		h.Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", h)
	}
	var n int
	if err := plain.open(t).QueryRow(`SELECT count(*) FROM posts`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("the backup holds %d posts (%v), want 5", n, err)
	}
	zipped := downloadBackup(t, s, tok, "?gzip=1", nil)
	if zipped.header.Get("Content-Type") != "application/gzip" || !strings.HasSuffix(zipped.header.Get("Content-Disposition"), ".db.gz") {
		t.Fatalf("?gzip=1 headers %v", zipped.header)
	}
	zipped.open(t)
	coded := downloadBackup(t, s, tok, "", map[string]string{"Accept-Encoding": "gzip"})
	if coded.header.Get("Content-Encoding") != "gzip" || coded.header.Get("Content-Type") != "application/vnd.sqlite3" {
		t.Fatalf("Accept-Encoding: gzip headers %v", coded.header)
	}
	coded.open(t)
	log := string(must(t, s, "GET", "/api/v1/admin/audit-log?actionPrefix=backup.", bearer(tok)))
	if strings.Count(log, `"action":"backup.download"`) != 3 {
		t.Fatalf("audit log: %s", log)
	}
	// Nothing is left behind in the node's directory but what a restore keeps.
	entries, _ := os.ReadDir(filepath.Join(s.DataDir, "restores"))
	if len(entries) != 0 {
		t.Fatalf("restores/ holds %v after downloads", entries)
	}
}

// TestBackupRoles: backup, restore and the backup runs are the owner's
// (SPEC.md): every other role gets 403, no credentials 401.
func TestBackupRoles(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.AdminToken(t)
	var sc []apitest.Scenario
	for _, role := range []string{"viewer", "editor", "developer"} {
		_, tok := newAdmin(t, s, role+"@example.com", role)
		for _, r := range []struct{ method, url string }{
			{"GET", backupURL}, {"POST", restoreURL}, {"GET", backupsURL}, {"POST", backupsURL},
		} {
			sc = append(sc, apitest.Scenario{Name: role + " " + r.method + " " + r.url, Method: r.method, URL: r.url,
				Body: "x", Headers: bearer(tok), ExpectedStatus: http.StatusForbidden})
		}
	}
	sc = append(sc,
		apitest.Scenario{Name: "anonymous backup", URL: backupURL, ExpectedStatus: http.StatusUnauthorized},
		apitest.Scenario{Name: "anonymous restore", Method: "POST", URL: restoreURL, Body: "x", ExpectedStatus: http.StatusUnauthorized},
	)
	apitest.Run(t, s, sc)
}

// TestRestoreRefusals: an upload that is not an intact svcd database of a
// schema version this binary knows is refused with 422 naming why
// (details.file), and changes nothing.
func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	tok := s.AdminToken(t)
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	for i := range 200 {
		s.CreateRecord(t, "posts", map[string]any{"title": strings.Repeat(fmt.Sprint(i), 100)})
	}
	b := downloadBackup(t, s, tok, "", nil)
	truncated := b.data[:len(b.data)/2]
	zeroed := append([]byte(nil), b.data...)
	page := 4096
	mid := len(zeroed) / 2 / page * page
	for i := mid; i < mid+page; i++ {
		zeroed[i] = 0
	}
	newer := b.rewrite(t, `UPDATE _svc_meta SET v = 9999 WHERE k = 'schema_version'`)
	noMeta := b.rewrite(t, `DROP TABLE _svc_meta`)
	plain := backupFile{}.rewrite(t, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`, `INSERT INTO notes (body) VALUES ('hello')`)
	before := digestOf(t, s, tok)
	for _, tc := range []struct {
		name, field string
		file        []byte
		want        string
	}{
		{"empty", "", nil, "empty"},
		{"text", "", []byte("this is not a database"), "not an intact database file"},
		{"truncated", "", truncated, "not an intact"},
		{"a zeroed page", "", zeroed, "not an intact SQLite database"},
		{"gzip of garbage", "", gz([]byte("garbage")), "not an intact database file"},
		{"a newer schema", "", newer, "newer than this svcd's"},
		{"newer, gzip, multipart", "file", gz(newer), "newer than this svcd's"},
		{"no meta table", "", noMeta, "not one of svcd"},
		{"not svcd's", "", plain, "not one of svcd"},
		{"multipart without file", "other", b.data, "No part named file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := upload(t, s, tok, tc.file, tc.field)
			apitest.CheckCommon(t, res, body)
			if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %s; want 422 with %q", res.StatusCode, body, tc.want)
			}
			apitest.Details("file")(t, s, body)
		})
	}
	after := digestOf(t, s, tok)
	delete(before, "table:_svc_audit")
	delete(after, "table:_svc_audit")
	if !equalMaps(before, after) {
		t.Fatal("a refused restore changed the database")
	}
	entries, _ := os.ReadDir(filepath.Join(s.DataDir, "restores"))
	if len(entries) != 0 {
		t.Fatalf("refused uploads left %v", entries)
	}
}

// digestOf is the node's digest tables (GET /admin/cluster/digest).
func digestOf(t testing.TB, s *apitest.Server, tok string) map[string]string {
	t.Helper()
	var d struct {
		Data struct {
			AppliedIndex uint64            `json:"applied_index"`
			Tables       map[string]string `json:"tables"`
		} `json:"data"`
	}
	if err := json.Unmarshal(must(t, s, "GET", "/api/v1/admin/cluster/digest", bearer(tok)), &d); err != nil {
		t.Fatal(err)
	}
	return d.Data.Tables
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
