package api_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/internal/progress/progresstest"
)

// slowWriter is an export's client that reads slowly.
type slowWriter struct {
	w     io.Writer
	delay time.Duration
}

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.w.Write(p)
}

// TestCSVProgressLogged imports 6000 rows with a 10 ms progress interval:
// the node logs several "csv import progress" lines with growing row and
// byte counts against the body's size while the import runs, then one
// summary with the created and failed counts. The export of those rows,
// to a client that reads slowly, logs its progress against the row count
// the same way.
func TestCSVProgressLogged(t *testing.T) {
	rec := progresstest.New()
	s := apitest.Start(t, apitest.Options{Logger: rec.Logger(), ProgressInterval: 10 * time.Millisecond})
	s.CreateCollection(t, coll("bulk", "base", []map[string]any{f("title", "text", "unique", true), f("n", "number")}))

	const rows = 6000
	var b strings.Builder
	b.WriteString("title,n\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&b, "row%05d,%d\n", i, i)
	}
	b.WriteString("row00000,1\n") // a duplicate: one failed row
	body := b.String()
	data := importOK(t, s, "bulk", body)
	if apitest.Int(t, data["created"]) != rows || apitest.Int(t, data["failed"]) != 1 {
		t.Fatalf("import answered %v", data)
	}

	lines, sum := progresstest.CheckProgress(t, rec, "csv import", "rows", 3)
	for _, l := range lines {
		if l.Str("collection") != "bulk" || l.Int("total_bytes") != int64(len(body)) || l.Int("bytes") > int64(len(body)) ||
			l.Str("percent") == "" || (l.Int("bytes") > 0 && l.Str("left") == "") || !strings.Contains(l.Str("rate"), "rows/s") {
			t.Errorf("import progress line %v; want the collection, bytes of total_bytes %d, percent, left and a rate in rows/s", l.Attrs, len(body))
		}
	}
	if sum.Int("rows") != rows+1 || sum.Int("bytes") != int64(len(body)) || sum.Int("created") != rows || sum.Int("failed") != 1 ||
		sum.Str("collection") != "bulk" || sum.Str("elapsed") == "" || sum.Str("rate") == "" {
		t.Errorf("import summary %v", sum.Attrs)
	}

	x, err := s.Stack.CSV.ExportCSV("bulk")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := x.WriteTo(context.Background(), slowWriter{w: &out, delay: 3 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	t.Logf("import: %d progress lines", len(lines))
	lines, sum = progresstest.CheckProgress(t, rec, "csv export", "bytes", 3)
	t.Logf("export: %d progress lines", len(lines))
	for _, l := range lines {
		if l.Int("total_rows") != rows || l.Str("percent") == "" {
			t.Errorf("export progress line %v; want total_rows %d and a percent", l.Attrs, rows)
		}
	}
	if sum.Int("rows") != rows || sum.Int("bytes") != int64(out.Len()) || sum.Str("collection") != "bulk" {
		t.Errorf("export summary %v; want %d rows, %d bytes", sum.Attrs, rows, out.Len())
	}
}
