package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"svcd/api/dashboard"
)

// TestFirstLoadBudget: everything the first load fetches (the page, the
// stylesheet, every module), gzip-compressed as a proxy or a browser
// cache would hold it, stays under 200 KB; and it is served from this
// origin only (no CDN: no absolute URL in any asset).
func TestFirstLoadBudget(t *testing.T) {
	srv := httptest.NewServer(dashboard.Handler(http.NotFoundHandler()))
	defer srv.Close()
	names := []string{"/_/"}
	err := fs.WalkDir(dashboard.Assets(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != "index.html" {
			names = append(names, "/_/assets/"+p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range names {
		res, err := http.Get(srv.URL + n)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d", n, res.StatusCode)
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "eval("} {
			if strings.Contains(string(body), bad) {
				t.Errorf("%s contains %q", n, bad)
			}
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		total += buf.Len()
	}
	if total >= 200*1024 || total == 0 {
		t.Fatalf("first load = %d bytes compressed, want under 200 KB", total)
	}
	t.Logf("first load: %d files, %d bytes compressed", len(names), total)
}
