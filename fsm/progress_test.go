package fsm_test

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"svcd/fsm"
	"svcd/internal/progress/progresstest"
)

// slowWriter is a snapshot's destination that takes its time, as a slow
// disk or a follower at the end of a thin link does.
type slowWriter struct {
	w     io.Writer
	delay time.Duration
}

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.w.Write(p)
}

// slowReader hands a snapshot out in small reads, slowly.
type slowReader struct {
	r     io.Reader
	delay time.Duration
}

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.r.Read(p[:min(len(p), 32<<10)])
}

// TestSnapshotAndRestoreLogProgress writes a real snapshot of a 2 MB
// database to a slow destination and restores it from a slow source, with
// a 10 ms progress interval: both log progress lines with growing byte
// counts against the right total while they run, then one summary.
func TestSnapshotAndRestoreLogProgress(t *testing.T) {
	t.Parallel()
	rec := progresstest.New()
	s, err := fsm.Open(fsm.Options{Path: filepath.Join(t.TempDir(), "data.db"), Registry: testRegistry(),
		Logger: rec.Logger(), ProgressInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeStore(t, s) })
	entries := []fsm.Entry{ddlEntry(1, kvDDL)}
	for i := uint64(2); i <= 2000; i++ {
		entries = append(entries, putEntry(i, logKey(i), strings.Repeat("v", 1000)))
	}
	mustApply(t, s, entries...)

	sn, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := sn.WriteTo(slowWriter{w: &buf, delay: 3 * time.Millisecond})
	sn.Release()
	if err != nil {
		t.Fatal(err)
	}
	if n < 2<<20 {
		t.Fatalf("the snapshot has %d bytes; the test wants a few MB", n)
	}
	lines, sum := progresstest.CheckProgress(t, rec, "snapshot", "bytes", 3)
	writes := 0
	for _, l := range lines {
		if l.Str("phase") == "write" {
			writes++
			if l.Int("total_bytes") != n || l.Str("percent") == "" || (l.Int("bytes") > 0 && l.Str("left") == "") {
				t.Errorf("write progress line %+v; want total_bytes %d, a percent and a time left", l.Attrs, n)
			}
		}
	}
	if writes < 3 {
		t.Errorf("%d progress lines of the write phase, want several", writes)
	}
	if sum.Int("bytes") != n || sum.Int("index") != 2000 || sum.Str("rate") == "" || sum.Str("elapsed") == "" {
		t.Errorf("snapshot summary %+v; want bytes %d, index 2000, rate and elapsed", sum.Attrs, n)
	}

	r, err := fsm.Open(fsm.Options{Path: filepath.Join(t.TempDir(), "restored.db"), Registry: testRegistry(),
		Logger: rec.Logger(), ProgressInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeStore(t, r) })
	if err := r.Restore(slowReader{r: bytes.NewReader(buf.Bytes()), delay: 3 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	dbBytes := n - 52 // the checksum trailer is not part of the database
	lines, sum = progresstest.CheckProgress(t, rec, "database restore", "bytes", 3)
	for _, l := range lines {
		if l.Str("phase") == "receive" && l.Int("bytes") > 0 && (l.Int("total_bytes") != dbBytes || l.Str("left") == "") {
			t.Errorf("receive progress line %+v; want total_bytes %d (from the database header) and a time left", l.Attrs, dbBytes)
		}
	}
	if sum.Int("bytes") != dbBytes || sum.Int("index") != 2000 {
		t.Errorf("restore summary %+v; want bytes %d, index 2000", sum.Attrs, dbBytes)
	}
	if got := countRows(t, r, "kv"); got != 1999 {
		t.Errorf("restored %d rows, want 1999", got)
	}
}
