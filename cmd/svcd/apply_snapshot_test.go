package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bootSnapshot is a schema snapshot a test writes to a file: a base
// collection with an index and an auth collection it relates to.
const bootSnapshot = `{"version": 1, "collections": [
  {"name": "notes", "type": "base", "view_rule": "", "create_rule": "",
   "fields": [{"name": "body", "type": "text"}, {"name": "owner", "type": "relation", "collection": "people"}],
   "indexes": [{"field": "body", "unique": false}]},
  {"name": "people", "type": "auth", "fields": []}
]}`

// TestServeApplySnapshot: --apply-snapshot applies its file through the
// log once the node is ready (the collections exist over HTTP); a second
// start with the same file changes nothing; a file that is not a
// snapshot this binary applies stops start-up before anything is opened.
func TestServeApplySnapshot(t *testing.T) {
	tmp := t.TempDir()
	good, bad, newer := filepath.Join(tmp, "good.json"), filepath.Join(tmp, "bad.json"), filepath.Join(tmp, "newer.json")
	os.WriteFile(good, []byte(bootSnapshot), 0o600)
	os.WriteFile(bad, []byte(`{"version": 1, "collections": [{"name": "", "type": "base"}]}`), 0o600)
	os.WriteFile(newer, []byte(`{"version": 99, "collections": []}`), 0o600)

	for _, c := range []struct{ file, want string }{
		{bad, "snapshot.collections.0.name: cannot be blank"},
		{newer, "snapshot format 99 is newer than this node's"},
		{filepath.Join(tmp, "missing.json"), "no such file"},
	} {
		dir := filepath.Join(tmp, "refused")
		r := svcd(t, "", nil, "serve", "--http", "127.0.0.1:0", "--dir", dir, "--apply-snapshot", c.file)
		if r.code == 0 || !strings.Contains(r.stderr, "--apply-snapshot") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want a failure naming --apply-snapshot and %q", c.file, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "data.db")); err == nil {
			t.Errorf("%s: a refused snapshot left a database behind", c.file)
		}
	}
	if r := svcd(t, "", nil, "serve", "--snapshot-mode", "everything"); r.code != 2 || !strings.Contains(r.stderr, "--snapshot-mode") {
		t.Errorf("--snapshot-mode everything: exit %d, %q", r.code, r.stderr)
	}

	dir := filepath.Join(tmp, "node")
	n := startServe(t, dir, nil, "--apply-snapshot", good, "--snapshot-mode", "sync")
	applied := n.wait(t, regexp.MustCompile(`"msg":"schema snapshot applied"`))
	if !strings.Contains(applied, `"changes":3`) {
		t.Errorf("first start: %s; want 3 changes (two collections, an index)", applied)
	}
	var banner map[string]any
	json.Unmarshal([]byte(n.wait(t, regexp.MustCompile(`"msg":"svcd serving"`))), &banner)
	health, _ := banner["health"].(string)
	base := strings.TrimSuffix(health, "/_/health")
	res, err := http.Post(base+"/api/v1/admin/setup", "application/json",
		strings.NewReader(`{"email":"ops@example.com","password":"a-long-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	var setup struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	json.NewDecoder(res.Body).Decode(&setup)
	res.Body.Close()
	for _, path := range []string{"/api/v1/admin/collections/notes", "/api/v1/admin/collections/people", "/api/v1/admin/collections/notes/indexes"} {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+setup.Data.Token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s after --apply-snapshot: %d %v", path, res.StatusCode, body)
		}
	}
	n.stop(t)

	n = startServe(t, dir, nil, "--apply-snapshot", good)
	again := n.wait(t, regexp.MustCompile(`"msg":"schema snapshot applied"`))
	if !strings.Contains(again, `"changes":0`) {
		t.Errorf("second start with the same snapshot: %s; want 0 changes", again)
	}
	n.stop(t)
}
