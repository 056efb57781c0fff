package api_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"svcd/api/apitest"
)

// redoclyBin is the Redocly CLI that npm installed ($REDOCLY_DIR, else
// ~/.cache/svcd/redocly, where .ci/run puts it).
func redoclyBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("REDOCLY_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "svcd", "redocly")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "redocly")
	if _, err := os.Stat(bin); err != nil {
		apitest.NeedPeer(t, "the Redocly CLI", "npm install --prefix ~/.cache/svcd/redocly @redocly/cli@2 (or set REDOCLY_DIR)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		apitest.NeedPeer(t, "node", "apt-get install nodejs")
	}
	return bin
}

// TestOpenAPILint lints the document an owner gets (every route, every
// collection kind and field type) with Redocly's recommended rules, less
// those testdata/redocly.yaml turns off and says why.
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	bin := redoclyBin(t)
	s := apitest.Start(t, apitest.Options{})
	openapiFixture(t, s)
	s.CreateCollection(t, coll("kinds", "base", []map[string]any{
		f("t", "text", "pattern", "[a-z]+"), f("e", "editor"), f("m", "email"), f("u", "url"), f("n", "number"),
		f("b", "bool"), f("d", "date", "min", 0), f("a", "autodate", "on_create", true), f("s", "select", "values", []string{"x"}),
		f("j", "json"), f("g", "geoPoint"), f("r", "relation", "collection", "posts", "multiple", true), f("fl", "file", "multiple", true),
		f("p", "password"), f("v", "vector", "dimensions", 3),
	}, "view_rule", "", "create_rule", "", "update_rule", "", "delete_rule", ""))
	s.CreateCollection(t, coll("post_titles", "view", nil, "view_query", "SELECT id, title FROM posts", "view_rule", ""))
	res, body := s.Do(t, http.MethodGet, "/api/v1/openapi.json", nil, s.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("openapi.json: %d %s", res.StatusCode, body)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, body, 0o600); err != nil {
		t.Fatal(err)
	}
	config, err := filepath.Abs(filepath.Join("testdata", "redocly.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "lint", "--config", config, "--format", "stylish", doc)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
	t.Logf("redocly lint:\n%s", out)
}
