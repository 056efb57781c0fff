package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestCSVImportChunksByBytes: an import command carries at most 500 rows
// and at most 256 KiB of cells, so a log entry stays small whatever the
// rows' size. 2,000 rows of 1 KiB take at least eight commands (256 rows
// each by size), not the four the row count alone would give.
func TestCSVImportChunksByBytes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("wide", "base", []map[string]any{f("title", "text"), f("body", "text")}))
	index := func(body string) uint64 {
		t.Helper()
		res, out := s.Do(t, http.MethodPost, "/api/v1/admin/import/wide", body, s.AdminHeaders(t, map[string]string{"Content-Type": "text/csv"}))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("import: %d %s", res.StatusCode, out)
		}
		i, err := strconv.ParseUint(res.Header.Get("X-Svc-Index"), 10, 64)
		if err != nil {
			t.Fatalf("X-Svc-Index %q", res.Header.Get("X-Svc-Index"))
		}
		return i
	}
	before := index("title,body\nfirst,x\n")
	var b strings.Builder
	b.WriteString("title,body\n")
	cell := strings.Repeat("a", 1024)
	for i := range 2000 {
		b.WriteString("r" + strconv.Itoa(i) + "," + cell + "\n")
	}
	after := index(b.String())
	if n := after - before; n < 8 {
		t.Errorf("2,000 rows of 1 KiB went in %d log commands (audit rows included), want at least 8", n)
	}
	if got := apitest.Int(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/wide?perPage=1", nil)["totalItems"]); got != 2001 {
		t.Errorf("%d records after the imports, want 2001", got)
	}
}
