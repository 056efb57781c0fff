package fsm_test

import (
	"bytes"
	"io"
	"path/filepath"
	"reflect"
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

// TestSnapshotStepsCopyOneState: the snapshot's copy steps 1,024 pages at
// a time while applies go on; every step reads the pinned state, so the
// copy never starts over (its byte count never goes back) and the restored
// database is the state at the snapshot's index.
func TestSnapshotStepsCopyOneState(t *testing.T) {
	t.Parallel()
	rec := progresstest.New()
	s, err := fsm.Open(fsm.Options{Path: filepath.Join(t.TempDir(), "data.db"), Registry: testRegistry(),
		Logger: rec.Logger(), ProgressInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeStore(t, s) })
	entries := []fsm.Entry{ddlEntry(1, kvDDL)}
	for i := uint64(2); i <= 3000; i++ {
		entries = append(entries, putEntry(i, "big"+logKey(i), strings.Repeat("b", 4000)))
	}
	mustApply(t, s, entries...) // about 13 MB: several steps of 4 MiB
	a := startApplier(t, s, 3001, 7)
	waitIndex(t, s, 3100)

	resume := a.park(t)
	sn, err := s.Snapshot()
	if err != nil {
		resume()
		t.Fatal(err)
	}
	want := digest(t, s)
	resume()
	waitIndex(t, s, sn.Index()+50)
	var buf bytes.Buffer
	// A slow destination keeps the applier writing between the copy's
	// steps, and the write phase long enough to report.
	if _, err := sn.WriteTo(slowWriter{w: &buf, delay: 200 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	sn.Release()
	waitIndex(t, s, sn.Index()+100)
	a.halt(t)

	var copyBytes []int64
	for _, l := range rec.Lines("snapshot progress") {
		if l.Str("phase") == "copy" {
			copyBytes = append(copyBytes, l.Int("bytes"))
		}
	}
	for i := 1; i < len(copyBytes); i++ {
		if copyBytes[i] < copyBytes[i-1] {
			t.Fatalf("the copy went back from %d to %d bytes: it started over", copyBytes[i-1], copyBytes[i])
		}
	}
	r, _ := restoreInto(t, buf.Bytes())
	if got := digest(t, r); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored digest differs from the state at index %d", sn.Index())
	}
	if r.AppliedIndex() != sn.Index() {
		t.Fatalf("restored index %d, want %d", r.AppliedIndex(), sn.Index())
	}
	t.Logf("snapshot of index %d: %d bytes; copy phase reported %d times", sn.Index(), buf.Len(), len(copyBytes))
}
