package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/mattn/go-sqlite3" // "sqlite3": opens the backups as any SQLite user would

	"svcd/api/apitest"
)

// TestBackupCommand: svcd backup copies a running node's database, through
// its admin socket (--dir) or its URL with SVC_TOKEN (--url), to a file,
// standard output or an S3 object on the versitygw gateway (its connection
// from SVC_S3_* or from the node's s3.* settings); every copy passes
// integrity_check and holds the node's records. With no node running it
// says so and exits 1.
func TestBackupCommand(t *testing.T) {
	dir := t.TempDir()
	n := startServe(t, dir, nil)
	line := n.wait(t, regexp.MustCompile(`"msg":"svcd serving"`))
	var banner map[string]any
	if err := json.Unmarshal([]byte(line), &banner); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(banner["health"].(string), "/_/health")
	if r := svcd(t, "", nil, "admin", "create", "--dir", dir, "owner@example.com", "a-long-password-1"); r.code != 0 {
		t.Fatalf("admin create: %d %s", r.code, r.stderr)
	}
	tok := call(t, base, "", "POST", "/api/v1/admin/auth/login", `{"email":"owner@example.com","password":"a-long-password-1"}`)["token"].(string)
	call(t, base, tok, "POST", "/api/v1/admin/collections", `{"name":"notes","type":"base","fields":[{"name":"body","type":"text"}]}`)
	for range 3 {
		call(t, base, tok, "POST", "/api/v1/notes", `{"body":"kept"}`)
	}
	out := t.TempDir()
	check := func(name string, data []byte) {
		t.Helper()
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			data, _ = io.ReadAll(zr)
		}
		path := filepath.Join(out, name+".check.db")
		os.WriteFile(path, data, 0o600)
		db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var ok string
		var notes int
		db.QueryRow("PRAGMA integrity_check").Scan(&ok)
		db.QueryRow("SELECT count(*) FROM notes").Scan(&notes)
		if ok != "ok" || notes != 3 {
			t.Fatalf("%s: integrity_check %q, %d notes", name, ok, notes)
		}
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name, file string
		env        []string
		args       []string
	}{
		{"socket", "socket.db", nil, []string{"--dir", dir}},
		{"socket-gzip", "socket.db.gz", nil, []string{"--dir", dir, "--gzip"}},
		{"url", "url.db", []string{"SVC_TOKEN=" + tok}, []string{"--url", base}},
	} {
		path := filepath.Join(out, tc.file)
		r := svcd(t, "", tc.env, append([]string{"backup", "--to", path}, tc.args...)...)
		if r.code != 0 || !strings.Contains(r.stderr, "backup of log entry ") {
			t.Fatalf("%s: %d %s", tc.name, r.code, r.stderr)
		}
		check(tc.name, read(path))
	}
	r := svcd(t, "", []string{"SVC_TOKEN=" + tok, "SVC_URL=" + base}, "backup", "--to", "-", "--gzip")
	if r.code != 0 {
		t.Fatalf("stdout: %d %s", r.code, r.stderr)
	}
	check("stdout", []byte(r.stdout))

	g := apitest.StartVersityGW(t, "svcd-backups")
	s3env := []string{"SVC_S3_ENDPOINT=" + g.URL, "SVC_S3_REGION=" + g.Region, "SVC_S3_ACCESS_KEY_ID=" + g.AccessKey, "SVC_S3_SECRET_ACCESS_KEY=" + g.SecretKey}
	if r := svcd(t, "", s3env, "backup", "--dir", dir, "--to", "s3://svcd-backups/env/one.db"); r.code != 0 {
		t.Fatalf("s3 from the environment: %d %s", r.code, r.stderr)
	}
	check("s3-env", object(t, g, "env/one.db"))
	settings, _ := json.Marshal(g.Settings())
	call(t, base, tok, "PATCH", "/api/v1/admin/settings", string(settings))
	if r := svcd(t, "", nil, "backup", "--dir", dir, "--to", "s3://svcd-backups/node/two.db.gz", "--gzip"); r.code != 0 {
		t.Fatalf("s3 from the node's settings (socket): %d %s", r.code, r.stderr)
	}
	check("s3-settings", object(t, g, "node/two.db.gz"))
	if r := svcd(t, "", []string{"SVC_TOKEN=" + tok}, "backup", "--url", base, "--to", "s3://svcd-backups/url/three.db"); r.code != 0 {
		t.Fatalf("s3 from the node's settings (url): %d %s", r.code, r.stderr)
	}
	check("s3-url", object(t, g, "url/three.db"))

	n.stop(t)
	r = svcd(t, "", nil, "backup", "--dir", dir, "--to", filepath.Join(out, "none.db"))
	if r.code != 1 || !strings.Contains(r.stderr, "no node is running on") {
		t.Fatalf("without a node: %d %s", r.code, r.stderr)
	}
	if r := svcd(t, "", nil, "backup", "--dir", dir); r.code != 2 || !strings.Contains(r.stderr, "--to is required") {
		t.Fatalf("without --to: %d %s", r.code, r.stderr)
	}
}

// call sends an API request and returns the answer's data.
func call(t *testing.T, base, tok, method, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	var out struct {
		Data map[string]any `json:"data"`
	}
	json.Unmarshal(b, &out)
	return out.Data
}

// object reads key from the gateway's bucket.
func object(t *testing.T, g *apitest.VersityGW, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := g.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(g.Bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer o.Body.Close()
	b, err := io.ReadAll(o.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
