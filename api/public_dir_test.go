package api_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// publicFixture writes a small site, and a secret beside it that no path
// may reach.
func publicFixture(t *testing.T) string {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "site")
	files := map[string]string{
		"index.html":          "<!doctype html><title>home</title>",
		"app.js":              "console.log('hi')",
		"style.css":           "body{}",
		"guide/index.html":    "<title>guide</title>",
		"empty/readme.txt":    "no index here",
		"api/shadowed.txt":    "never served",
		"realtime/x.txt":      "never served",
		"data/report.json":    `{"ok":true}`,
		"images/logo.svg":     "<svg xmlns='http://www.w3.org/2000/svg'/>",
		"nested/deep/page.md": "# page",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(parent, "secret.txt"), []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(parent, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rawGet sends path as written (no client-side cleaning of ..).
func rawGet(t *testing.T, s *apitest.Server, path string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = path
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func TestPublicDir(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{PublicDir: publicFixture(t)})
	html := map[string]string{"Accept": "text/html,application/xhtml+xml"}
	cases := []struct {
		name, path string
		headers    map[string]string
		status     int
		ctype      string
		body       string
	}{
		{"the root serves index.html", "/", nil, 200, "text/html; charset=utf-8", "<title>home</title>"},
		{"a script", "/app.js", nil, 200, "text/javascript; charset=utf-8", "console.log"},
		{"a style sheet", "/style.css", nil, 200, "text/css; charset=utf-8", "body{}"},
		{"json", "/data/report.json", nil, 200, "application/json", `{"ok":true}`},
		{"svg", "/images/logo.svg", nil, 200, "image/svg+xml", "<svg"},
		{"a folder's index.html", "/guide/", nil, 200, "text/html; charset=utf-8", "<title>guide</title>"},
		{"a folder without its slash is redirected", "/guide", nil, 301, "", ""},
		{"no listing of a folder without index.html", "/empty/", nil, 404, "application/json", `"code":404`},
		{"a missing file is the API's 404", "/missing.html", html, 404, "application/json", `"code":404`},
		{"traversal is refused", "/../secret.txt", nil, 404, "application/json", `"code":404`},
		{"encoded traversal is refused", "/%2e%2e/secret.txt", nil, 404, "application/json", `"code":404`},
		{"a symbolic link out of the folder is refused", "/link.txt", nil, 404, "application/json", `"code":404`},
		{"the API wins over a file named api", "/api/shadowed.txt", nil, 404, "application/json", `"status":404`},
		{"realtime wins", "/realtime/x.txt", nil, 404, "application/json", `"code":404`},
		{"the probes win", "/_/health", nil, 200, "application/json", `"status":"ok"`},
		{"the API answers", "/api/v1/admin/setup/status", nil, 200, "application/json", `"data"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := rawGet(t, s, c.path, c.headers)
			if status != c.status {
				t.Fatalf("GET %s: %d %s", c.path, status, body)
			}
			if c.ctype != "" && !strings.HasPrefix(h.Get("Content-Type"), c.ctype) {
				t.Errorf("Content-Type %q, want %q", h.Get("Content-Type"), c.ctype)
			}
			if !strings.Contains(body, c.body) {
				t.Errorf("body %q lacks %q", body, c.body)
			}
			if strings.Contains(body, "top secret") || strings.Contains(body, "never served") {
				t.Errorf("leaked: %q", body)
			}
		})
	}
	t.Run("a POST is not the site's", func(t *testing.T) {
		res, body := s.Do(t, http.MethodPost, "/index.html", "x", nil)
		if res.StatusCode != http.StatusNotFound || strings.Contains(string(body), "<title>") {
			t.Fatalf("POST /index.html: %d %s", res.StatusCode, body)
		}
	})
}

func TestPublicDirSPA(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{PublicDir: publicFixture(t), PublicSPA: true})
	html := map[string]string{"Accept": "text/html,application/xhtml+xml"}
	cases := []struct {
		name, path string
		headers    map[string]string
		status     int
		body       string
	}{
		{"an unmatched page that accepts HTML gets index.html", "/app/settings/profile", html, 200, "<title>home</title>"},
		{"files are still files", "/app.js", html, 200, "console.log"},
		{"an unmatched asset (no HTML accepted) is 404", "/missing.js", map[string]string{"Accept": "*/*"}, 404, `"code":404`},
		{"the API keeps its 404", "/api/v1/nope/x/y/z", html, 404, `"code":404`},
		{"the probes keep theirs", "/_/nope", html, 404, `"code":404`},
		{"traversal still refused", "/../secret.txt", html, 404, `"code":404`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := rawGet(t, s, c.path, c.headers)
			if status != c.status || !strings.Contains(body, c.body) {
				t.Fatalf("GET %s: %d %q, want %d with %q", c.path, status, body, c.status, c.body)
			}
		})
	}
}
