package fsm_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/fsm"
)

// TestCopyUnderWrites: copies taken while batches keep committing are
// intact databases (SQLite's full integrity_check) holding exactly the
// state of the index they report, and the applies never wait for a copy:
// the copy reads from a pinned read transaction. The figures are logged.
func TestCopyUnderWrites(t *testing.T) {
	dir := t.TempDir()
	s, _ := openStore(t, filepath.Join(dir, "data.db"), nil)
	mustApply(t, s, ddlEntry(1, kvDDL))
	pad := strings.Repeat("x", 400)
	next := uint64(2)
	batch := func(n int) []fsm.Entry {
		out := make([]fsm.Entry, n)
		for i := range out {
			out[i] = putEntry(next, fmt.Sprintf("k%07d", next), pad)
			next++
		}
		return out
	}
	for range 40 { // ~8 MB to copy
		mustApply(t, s, batch(500)...)
	}
	// The same batches with no copy running, for comparison.
	var baseline []time.Duration
	for range 200 {
		start := time.Now()
		mustApply(t, s, batch(20)...)
		baseline = append(baseline, time.Since(start))
	}
	var stop atomic.Bool
	var mu sync.Mutex
	var during []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			b := batch(20)
			start := time.Now()
			for _, r := range s.ApplyBatch(b) {
				if r.Err != nil {
					t.Errorf("apply during copy: %v", r.Err)
					return
				}
			}
			mu.Lock()
			during = append(during, time.Since(start))
			mu.Unlock()
		}
	}()
	var pinned time.Duration
	for i := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("copy-%d.db", i))
		info, err := s.CopyTo(path)
		if err != nil {
			t.Fatal(err)
		}
		pinned = max(pinned, info.Pinned)
		fi, err := fsm.InspectFile(path)
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		if got := uint64(fi.Meta["applied_index"]); got != info.Index {
			t.Fatalf("copy %d: applied index %d in the file, %d reported", i, got, info.Index)
		}
		c, _ := openStore(t, path, nil)
		if rows := countRows(t, c, "kv"); uint64(rows) != info.Index-1 {
			t.Fatalf("copy %d at index %d holds %d rows, want %d", i, info.Index, rows, info.Index-1)
		}
	}
	stop.Store(true)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(during) == 0 {
		t.Fatal("no batch was applied during the copies")
	}
	t.Logf("3 copies of ~%d rows (longest pinned %v); %d batches of 20 applied meanwhile: %s; without a copy: %s",
		next, pinned.Round(time.Millisecond), len(during), percentiles(during), percentiles(baseline))
}

// TestInspectFile: the check an uploaded backup passes before it is
// installed: garbage and a damaged file are ErrNotDatabase; a plain SQLite
// file has no meta table; a replica's copy has its applied index.
func TestInspectFile(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 400)), 0o600)
	if _, err := fsm.InspectFile(garbage); !errors.Is(err, fsm.ErrNotDatabase) {
		t.Fatalf("garbage: %v", err)
	}
	plain := filepath.Join(dir, "plain.db")
	seedDB(t, plain, `CREATE TABLE t (a)`, `INSERT INTO t VALUES (1)`)
	if fi, err := fsm.InspectFile(plain); err != nil || fi.Meta != nil || !fi.Tables["t"] {
		t.Fatalf("plain: %+v, %v", fi, err)
	}
	s, _ := openStore(t, filepath.Join(dir, "data.db"), nil)
	mustApply(t, s, ddlEntry(1, kvDDL))
	for i := uint64(2); i < 400; i++ {
		mustApply(t, s, putEntry(i, fmt.Sprintf("k%04d", i), strings.Repeat("v", 300)))
	}
	good := filepath.Join(dir, "good.db")
	if _, err := s.CopyTo(good); err != nil {
		t.Fatal(err)
	}
	if fi, err := fsm.InspectFile(good); err != nil || fi.Meta["applied_index"] != 399 || !fi.Tables["kv"] {
		t.Fatalf("good: %+v, %v", fi, err)
	}
	// Zero a page in the middle: the b-tree no longer adds up.
	b, _ := os.ReadFile(good)
	page := 4096
	for i := 10 * page; i < 11*page; i++ {
		b[i] = 0
	}
	bad := filepath.Join(dir, "bad.db")
	os.WriteFile(bad, b, 0o600)
	if _, err := fsm.InspectFile(bad); !errors.Is(err, fsm.ErrNotDatabase) {
		t.Fatalf("damaged: %v", err)
	}
}

// percentiles describes durations: p50, p99 and the slowest.
func percentiles(d []time.Duration) string {
	d = append([]time.Duration(nil), d...)
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[int(q*float64(len(d)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %v, p99 %v, max %v", at(0.5), at(0.99), d[len(d)-1].Round(10*time.Microsecond))
}
