package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPublicDirEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir, spa string
		wantDir  string
		wantSPA  bool
		err      string
	}{
		{"", "", "", false, ""},
		{dir, "", dir, false, ""},
		{dir, "1", dir, true, ""},
		{dir, "0", dir, false, ""},
		{dir, "yes", "", false, "SVC_PUBLIC_SPA: want 1 or 0"},
		{"", "1", "", false, "needs SVC_PUBLIC_DIR"},
		{filepath.Join(dir, "missing"), "", "", false, "no such file"},
		{file, "", "", false, "is not a folder"},
	}
	for _, c := range cases {
		t.Setenv("SVC_PUBLIC_DIR", c.dir)
		t.Setenv("SVC_PUBLIC_SPA", c.spa)
		d, spa, err := publicDirEnv()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %q: err %v, want %q", c.dir, c.spa, err, c.err)
			}
			continue
		}
		if err != nil || d != c.wantDir || spa != c.wantSPA {
			t.Errorf("%q %q: %q %v %v", c.dir, c.spa, d, spa, err)
		}
	}
}

// TestServePublicDir: svcd serve hands SVC_PUBLIC_DIR and SVC_PUBLIC_SPA
// to the server (the site at /, the fallback, the API winning) and its
// version to the OpenAPI document; a missing folder stops the start.
func TestServePublicDir(t *testing.T) {
	site := t.TempDir()
	if err := os.WriteFile(filepath.Join(site, "index.html"), []byte("<title>site</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := startServe(t, t.TempDir(), []string{"SVC_PUBLIC_DIR=" + site, "SVC_PUBLIC_SPA=1"})
	line := n.wait(t, regexp.MustCompile(`"msg":"svcd serving"`))
	var b map[string]any
	if err := json.Unmarshal([]byte(line), &b); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(b["health"].(string), "/_/health")
	get := func(path, accept string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if st, body := get("/", ""); st != 200 || body != "<title>site</title>" {
		t.Errorf("GET /: %d %q", st, body)
	}
	if st, body := get("/shop/cart", "text/html"); st != 200 || body != "<title>site</title>" {
		t.Errorf("SPA fallback: %d %q", st, body)
	}
	if st, body := get("/_/health", "text/html"); st != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("health: %d %q", st, body)
	}
	st, body := get("/api/v1/openapi.json", "")
	var doc struct {
		Info struct{ Version string } `json:"info"`
	}
	if err := json.Unmarshal([]byte(body), &doc); st != 200 || err != nil || !strings.HasPrefix(doc.Info.Version, testVersion) {
		t.Errorf("openapi.json: %d %v version %q", st, err, doc.Info.Version)
	}
	n.stop(t)

	r := svcd(t, "", []string{"SVC_PUBLIC_DIR=" + filepath.Join(site, "missing")}, "serve", "--http", "127.0.0.1:0", "--dir", t.TempDir())
	if r.code == 0 || !strings.Contains(r.stderr, "SVC_PUBLIC_DIR") {
		t.Errorf("a missing public dir: exit %d, %s", r.code, r.stderr)
	}
}
