package api_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	_ "github.com/mattn/go-sqlite3" // "sqlite3": reads the backups as any SQLite user would

	"svcd/api/apitest"
)

const (
	backupURL  = "/api/v1/admin/backup"
	restoreURL = "/api/v1/admin/restore"
	backupsURL = "/api/v1/admin/backups"
)

// backupFile is a downloaded backup.
type backupFile struct {
	data   []byte // the database file (decompressed)
	header http.Header
	index  uint64
}

// downloadBackup takes a backup of s through GET /admin/backup as tok, with
// query and headers, and checks what every download answers: 200, the
// index and checksum headers, the file they describe.
func downloadBackup(t testing.TB, s *apitest.Server, tok, query string, headers map[string]string) backupFile {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + tok, "Accept-Encoding": "identity"}
	for k, v := range headers {
		h[k] = v
	}
	req, err := http.NewRequest(http.MethodGet, s.URL+backupURL+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	// A transport of its own: it must not undo a Content-Encoding itself.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s%s: %d %s", backupURL, query, res.StatusCode, raw)
	}
	data := raw
	if res.Header.Get("Content-Type") == "application/gzip" || res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("gunzip: %v", err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatalf("gunzip: %v", err)
		}
	}
	sum := sha256.Sum256(data)
	if got := res.Header.Get("X-Svc-Backup-Sha256"); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("X-Svc-Backup-Sha256 %s, the file's %x", got, sum)
	}
	if got := res.Header.Get("X-Svc-Backup-Size"); got != strconv.Itoa(len(data)) {
		t.Fatalf("X-Svc-Backup-Size %s, the file has %d bytes", got, len(data))
	}
	idx, err := strconv.ParseUint(res.Header.Get("X-Svc-Backup-Index"), 10, 64)
	if err != nil || idx == 0 {
		t.Fatalf("X-Svc-Backup-Index %q", res.Header.Get("X-Svc-Backup-Index"))
	}
	return backupFile{data: data, header: res.Header, index: idx}
}

// open writes the backup to a file and opens it with the plain SQLite
// driver; it checks PRAGMA integrity_check and that the file holds the
// index it was announced with.
func (b backupFile) open(t testing.TB) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, b.data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check of the backup: %q, %v", res, err)
	}
	var idx uint64
	if err := db.QueryRow(`SELECT v FROM _svc_meta WHERE k = 'applied_index'`).Scan(&idx); err != nil || idx != b.index {
		t.Fatalf("the backup holds applied index %d (%v), announced %d", idx, err, b.index)
	}
	return db
}

// rewrite runs stmts on a copy of the backup and returns the new file.
func (b backupFile) rewrite(t testing.TB, stmts ...string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edited.db")
	if err := os.WriteFile(path, b.data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		if _, err := db.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	db.Close()
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// upload posts file to /admin/restore as tok: raw, or as the multipart
// field field when it is set.
func upload(t testing.TB, s *apitest.Server, tok string, file []byte, field string) (*http.Response, []byte) {
	t.Helper()
	h := bearer(tok)
	body := file
	if field != "" {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		w, _ := mw.CreateFormFile(field, "backup.db")
		w.Write(file)
		mw.Close()
		body, h["Content-Type"] = buf.Bytes(), mw.FormDataContentType()
	} else {
		h["Content-Type"] = "application/vnd.sqlite3"
	}
	return s.Do(t, http.MethodPost, restoreURL, body, h)
}

// gz compresses b.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
