package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestImportPocketBaseCommand: svcd import-pocketbase against a running
// node (the real binary), with the PocketBase fixture packed as it is
// kept: --dry-run writes nothing and lists the collections; the import
// prints what it did and the report file holds the same (superusers
// made admins with --superuser-role, the OAuth2 link); a second run
// creates nothing; without SVC_TOKEN it is a usage error.
func TestImportPocketBaseCommand(t *testing.T) {
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
	fixture, _ := filepath.Abs("../../internal/pbimport/testdata/pb_data_v0.40.4.tar.gz")
	env := []string{"SVC_TOKEN=" + tok, "SVC_URL=" + base}

	if r := svcd(t, "", []string{"SVC_URL=" + base}, "import-pocketbase", fixture); r.code != 2 || !strings.Contains(r.stderr, "SVC_TOKEN") {
		t.Errorf("without a token: %d %s", r.code, r.stderr)
	}
	if r := svcd(t, "", env, "import-pocketbase", "--superuser-role", "root", fixture); r.code != 2 || !strings.Contains(r.stderr, "--superuser-role") {
		t.Errorf("an unknown role: %d %s", r.code, r.stderr)
	}
	r := svcd(t, "", env, "import-pocketbase", "--dry-run", fixture)
	if r.code != 0 || !strings.Contains(r.stdout, "dry run") || !strings.Contains(r.stdout, "files -> files_pb") {
		t.Fatalf("dry run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if l := call(t, base, tok, "GET", "/api/v1/admin/collections", ""); strings.Contains(toJSONText(l), "posts") {
		t.Fatalf("the dry run created collections: %v", l)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	r = svcd(t, "", env, "import-pocketbase", "--report", report, "--superuser-role", "editor", fixture)
	if r.code != 0 || !strings.Contains(r.stdout, "posts: 2 created, 0 skipped (they exist), 0 failed, 2 files") ||
		!strings.Contains(r.stdout, "superusers (svcd admins): 2 created, 0 skipped (they exist), 0 failed") ||
		!strings.Contains(r.stdout, "OAuth2 links: 1 created, 0 skipped (they exist), 0 failed") {
		t.Fatalf("import: %d %s %s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(b), `"to": "files_pb"`) || !strings.Contains(string(b), `"ops@example.com"`) || !strings.Contains(string(b), "kakao") {
		t.Fatalf("report file: %s %v", b, err)
	}
	r = svcd(t, "", env, "import-pocketbase", fixture)
	if r.code != 0 || !strings.Contains(r.stdout, "posts: 0 created, 2 skipped (they exist), 0 failed, 0 files") ||
		!strings.Contains(r.stdout, "superusers (svcd admins): 0 created, 2 skipped (they exist), 0 failed") {
		t.Fatalf("second run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	post := call(t, base, tok, "GET", "/api/v1/posts/hellocustomid01", "")
	if post["title"] != "A draft with a custom id" {
		t.Fatalf("imported post %v", post)
	}
	// The superuser signs in with its PocketBase password, as an editor.
	ops := call(t, base, "", "POST", "/api/v1/admin/auth/login", `{"email":"ops@example.com","password":"opspass1234"}`)
	if a, _ := ops["admin"].(map[string]any); a == nil || a["role"] != "editor" {
		t.Fatalf("the imported superuser's sign-in %v", ops)
	}
}

func toJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
