package fsm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"svcd/fsm"
)

// logEntry is entry idx (>= 2) of the deterministic log the snapshot tests
// apply after the kv table was created at index 1: mostly puts of key
// k<idx>, with a failing command every 7th index and a membership entry
// every 11th.
func logEntry(idx uint64) fsm.Entry {
	switch {
	case idx%11 == 0:
		return fsm.Entry{Index: idx, Membership: true}
	case idx%7 == 0:
		return cmdEntry(idx, typeFail, nil)
	default:
		return putEntry(idx, logKey(idx), strings.Repeat("v", int(idx%50)))
	}
}

func logKey(idx uint64) string { return fmt.Sprintf("k%06d", idx) }

// keysUpTo is the content of kv once entries 1..idx of logEntry applied.
func keysUpTo(idx uint64) []string {
	var keys []string
	for i := uint64(2); i <= idx; i++ {
		if i%11 != 0 && i%7 != 0 {
			keys = append(keys, logKey(i))
		}
	}
	return keys
}

// applier applies logEntry batches of random size on its own goroutine
// until stopped, and can be parked between two batches.
type applier struct {
	s     *fsm.Store
	pause chan chan struct{}
	stop  chan struct{}
	done  chan struct{}
	errMu sync.Mutex
	err   error
}

func startApplier(t *testing.T, s *fsm.Store, from uint64, seed uint64) *applier {
	a := &applier{s: s, pause: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go a.run(from, rand.New(rand.NewPCG(seed, 1)))
	t.Cleanup(func() { a.halt(t) })
	return a
}

func (a *applier) run(next uint64, rng *rand.Rand) {
	defer close(a.done)
	for {
		select {
		case <-a.stop:
			return
		case resume := <-a.pause:
			select {
			case <-resume:
			case <-a.stop:
				return
			}
		default:
		}
		batch := make([]fsm.Entry, 1+rng.IntN(8))
		for i := range batch {
			batch[i] = logEntry(next)
			next++
		}
		for i, r := range a.s.ApplyBatch(batch) {
			e := batch[i]
			failing := !e.Membership && e.Index%7 == 0
			if r.Skipped || (r.Err != nil) != failing {
				a.errMu.Lock()
				a.err = fmt.Errorf("index %d: unexpected result %+v", e.Index, r)
				a.errMu.Unlock()
				return
			}
		}
	}
}

// park blocks until the applier sits between two batches and returns the
// function that lets it go on.
func (a *applier) park(t *testing.T) (resume func()) {
	t.Helper()
	ch := make(chan struct{})
	select {
	case a.pause <- ch:
	case <-a.done:
		t.Fatalf("applier stopped: %v", a.failure())
	case <-time.After(opTimeout):
		t.Fatal("applier did not reach a batch boundary (ApplyBatch stuck?)")
	}
	return func() { close(ch) }
}

func (a *applier) halt(t *testing.T) {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	select {
	case <-a.done:
	case <-time.After(opTimeout):
		t.Errorf("applier did not stop (ApplyBatch stuck?)")
	}
	if err := a.failure(); err != nil {
		t.Errorf("applier: %v", err)
	}
}

func (a *applier) failure() error {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	return a.err
}

func waitIndex(t *testing.T, s *fsm.Store, idx uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := s.WaitApplied(ctx, idx); err != nil {
		t.Fatalf("waiting for index %d (applied %d): %v", idx, s.AppliedIndex(), err)
	}
}

func writeSnapshot(t *testing.T, sn *fsm.Snapshot) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := sn.WriteTo(&buf)
	if err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if n != int64(buf.Len()) || n == 0 {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

// restoreInto opens a fresh store in its own directory and restores data.
func restoreInto(t *testing.T, data []byte) (*fsm.Store, *eventLog) {
	t.Helper()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "restored.db"), nil)
	var ev eventLog
	s.Observe(ev.observe)
	if err := s.Restore(bytes.NewReader(data)); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return s, &ev
}

func checkRestoreEvent(t *testing.T, ev *eventLog, idx uint64) {
	t.Helper()
	want := [][]fsm.Event{{{Index: idx, Kind: fsm.KindRestore}}}
	if got := ev.all(); !reflect.DeepEqual(got, want) {
		t.Errorf("observer got %+v, want %+v", got, want)
	}
}

func TestSnapshotWhileApplying(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "live.db"), nil)
	mustApply(t, s, ddlEntry(1, kvDDL))
	a := startApplier(t, s, 2, 1)
	waitIndex(t, s, 100)

	resume := a.park(t)
	sn, err := s.Snapshot()
	if err != nil {
		resume()
		t.Fatalf("Snapshot: %v", err)
	}
	defer sn.Release()
	atSnapshot := s.AppliedIndex()
	want := digest(t, s)
	resume()

	if sn.Index() != atSnapshot {
		t.Fatalf("snapshot Index = %d, store had applied %d", sn.Index(), atSnapshot)
	}
	// Applies go on while the snapshot is held, before and between writes.
	waitIndex(t, s, sn.Index()+100)
	first := writeSnapshot(t, sn)
	waitIndex(t, s, sn.Index()+200)
	second := writeSnapshot(t, sn)
	sn.Release()
	sn.Release() // documented as safe

	waitIndex(t, s, sn.Index()+250)
	a.halt(t)
	if now := digest(t, s); reflect.DeepEqual(now, want) {
		t.Fatal("live digest did not change after 250 more entries: the test proves nothing")
	}

	for name, data := range map[string][]byte{"first write": first, "second write": second} {
		t.Run(name, func(t *testing.T) {
			r, ev := restoreInto(t, data)
			if got := r.AppliedIndex(); got != sn.Index() {
				t.Errorf("restored AppliedIndex = %d, want %d", got, sn.Index())
			}
			if got := digest(t, r); !reflect.DeepEqual(got, want) {
				t.Errorf("restored digest differs from the digest at snapshot time:\n got %v\nwant %v", got, want)
			}
			if got, w := kvKeys(t, r), keysUpTo(sn.Index()); !slices.Equal(got, w) {
				t.Errorf("restored %d keys, want %d", len(got), len(w))
			}
			checkRestoreEvent(t, ev, sn.Index())
		})
	}
}

func TestSnapshotConsistentUnderConcurrentApplies(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "live.db"), nil)
	mustApply(t, s, ddlEntry(1, kvDDL))
	startApplier(t, s, 2, 2)

	// Snapshots taken without pausing the applier still pair an applied
	// index with exactly the rows of the entries up to it.
	var snaps [][]byte
	var idxs []uint64
	for i := 0; i < 4; i++ {
		waitIndex(t, s, s.AppliedIndex()+40)
		sn, err := s.Snapshot()
		if err != nil {
			t.Fatalf("Snapshot: %v", err)
		}
		data := writeSnapshot(t, sn)
		sn.Release()
		snaps = append(snaps, data)
		idxs = append(idxs, sn.Index())
	}
	for i, data := range snaps {
		r, _ := restoreInto(t, data)
		if got := r.AppliedIndex(); got != idxs[i] {
			t.Errorf("snapshot %d: restored AppliedIndex %d, want %d", i, got, idxs[i])
		}
		if got, want := kvKeys(t, r), keysUpTo(idxs[i]); !slices.Equal(got, want) {
			t.Errorf("snapshot %d at index %d: %d keys, want %d (index and data from different states)",
				i, idxs[i], len(got), len(want))
		}
	}
}

func TestRestoreReplacesDatabase(t *testing.T) {
	t.Parallel()
	src, _ := openStore(t, filepath.Join(t.TempDir(), "src.db"), nil)
	mustApply(t, src, ddlEntry(1, kvDDL))
	for i := uint64(2); i <= 30; i++ {
		apply(t, src, logEntry(i))
	}
	sn, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	data := writeSnapshot(t, sn)
	sn.Release()
	if sn.Index() != 30 {
		t.Fatalf("snapshot index %d", sn.Index())
	}

	// The target replica has other data and a higher applied index.
	path := filepath.Join(t.TempDir(), "dst.db")
	dst, fl := openStore(t, path, nil)
	mustApply(t, dst, ddlEntry(1, kvDDL), ddlEntry(2, `CREATE TABLE other (x INTEGER)`))
	for i := uint64(3); i <= 50; i++ {
		mustApply(t, dst, putEntry(i, fmt.Sprintf("old-%d", i), "x"))
	}
	var ev eventLog
	dst.Observe(ev.observe)

	if err := dst.Restore(bytes.NewReader(data)); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if n := len(fl.list()); n != 0 {
		t.Fatalf("the state machine stalled %d times", n)
	}
	if got := dst.AppliedIndex(); got != 30 {
		t.Fatalf("AppliedIndex after Restore = %d, want 30", got)
	}
	checkRestoreEvent(t, &ev, 30)
	if err := dst.WaitApplied(context.Background(), 30); err != nil {
		t.Fatalf("WaitApplied(30): %v", err)
	}
	if got, want := kvKeys(t, dst), keysUpTo(30); !slices.Equal(got, want) {
		t.Fatalf("keys after Restore = %v, want %v", got, want)
	}
	var others int
	err = dst.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'other'`).Scan(&others)
	})
	if err != nil || others != 0 {
		t.Fatalf("table from before the restore still present (%d, %v)", others, err)
	}
	if got := digest(t, dst); !reflect.DeepEqual(got, digest(t, src)) {
		t.Fatalf("restored digest differs from the source")
	}

	// Applying the source's log goes on from the restored index.
	var tail []fsm.Entry
	for i := uint64(25); i <= 40; i++ {
		tail = append(tail, logEntry(i))
	}
	res := apply(t, dst, tail...)
	for i, r := range res {
		idx := tail[i].Index
		if (idx <= 30) != r.Skipped {
			t.Errorf("index %d: Skipped = %v", idx, r.Skipped)
		}
	}
	apply(t, src, tail[6:]...)
	if got := dst.AppliedIndex(); got != 40 {
		t.Errorf("AppliedIndex = %d, want 40", got)
	}
	if got, want := digest(t, dst), digest(t, src); !reflect.DeepEqual(got, want) {
		t.Errorf("digest after applying the same tail differs:\n got %v\nwant %v", got, want)
	}
	closeStore(t, dst)
	again, _ := openStore(t, path, nil)
	if got := again.AppliedIndex(); got != 40 {
		t.Errorf("AppliedIndex after reopen = %d, want 40", got)
	}
	if got, want := kvKeys(t, again), keysUpTo(40); !slices.Equal(got, want) {
		t.Errorf("keys after reopen: %d, want %d", len(got), len(want))
	}
}

func TestRestoreRejectsBadInput(t *testing.T) {
	src, _ := openStore(t, filepath.Join(t.TempDir(), "src.db"), nil)
	mustApply(t, src, ddlEntry(1, kvDDL))
	for i := uint64(2); i <= 400; i += 20 {
		var b []fsm.Entry
		for j := i; j < i+20; j++ {
			b = append(b, putEntry(j, logKey(j), strings.Repeat("payload", 40)))
		}
		mustApply(t, src, b...)
	}
	sn, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	valid := writeSnapshot(t, sn)
	sn.Release()
	if len(valid) < 8*4096 {
		t.Fatalf("snapshot only %d bytes; the truncation cases need more pages", len(valid))
	}
	rng := rand.New(rand.NewPCG(7, 7))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	junkAfterHeader := append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xAB}, 8192)...)

	tests := []struct {
		name string
		in   func() io.Reader
	}{
		{"empty stream", func() io.Reader { return bytes.NewReader(nil) }},
		{"random bytes", func() io.Reader { return bytes.NewReader(random) }},
		{"text", func() io.Reader { return strings.NewReader("this is not a database\n") }},
		{"sqlite magic then junk", func() io.Reader { return bytes.NewReader(junkAfterHeader) }},
		{"truncated to half", func() io.Reader { return bytes.NewReader(valid[:len(valid)/2]) }},
		{"first page only", func() io.Reader { return bytes.NewReader(valid[:4096]) }},
		{"read error mid-stream", func() io.Reader {
			return io.MultiReader(bytes.NewReader(valid[:len(valid)/2]), iotest.ErrReader(errors.New("connection reset")))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, fl := openStore(t, filepath.Join(dir, "live.db"), nil)
			mustApply(t, s, ddlEntry(1, kvDDL))
			for i := uint64(2); i <= 20; i++ {
				apply(t, s, logEntry(i))
			}
			before := digest(t, s)
			var ev eventLog
			s.Observe(ev.observe)

			if err := s.Restore(tc.in()); err == nil {
				t.Error("Restore accepted bad input")
			}
			if n := len(fl.list()); n != 0 {
				t.Errorf("the state machine stalled: %+v", fl.list())
			}
			if got := s.AppliedIndex(); got != 20 {
				t.Errorf("AppliedIndex = %d, want 20", got)
			}
			if got := digest(t, s); !reflect.DeepEqual(got, before) {
				t.Errorf("database changed by a failed Restore")
			}
			if got, want := kvKeys(t, s), keysUpTo(20); !slices.Equal(got, want) {
				t.Errorf("keys = %v, want %v", got, want)
			}
			mustApply(t, s, putEntry(21, "after", "ok"))
			if got := countRows(t, s, "kv"); got != len(keysUpTo(20))+1 {
				t.Errorf("%d rows after a new apply", got)
			}
			if got := ev.all(); len(got) != 1 || got[0][0].Kind == fsm.KindRestore {
				t.Errorf("events after failed restore: %+v (want only the put)", got)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "live.db") || strings.Contains(e.Name(), "restore") {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
}

// TestRestoreCheckUsesTheRightFile puts the store in directories whose names
// mean something in an SQLite URI. Restore must vet the uploaded file itself:
// a valid snapshot is accepted, garbage is rejected and leaves the live
// database alone.
func TestRestoreCheckUsesTheRightFile(t *testing.T) {
	src, _ := openStore(t, filepath.Join(t.TempDir(), "src.db"), nil)
	mustApply(t, src, ddlEntry(1, kvDDL), putEntry(2, "from-snapshot", "1"))
	sn, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	valid := writeSnapshot(t, sn)
	sn.Release()

	// Subtest names stay plain so that t.TempDir itself is a safe path.
	tests := []struct{ name, dir string }{
		{"plain", "plain"},
		{"space", "with space"},
		{"hash", "hash#dir"},
		{"question mark", "query?dir"},
		{"percent escape", "percent%41dir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := filepath.Join(root, tc.dir)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			// Seed under a neutral name, then move the file in place.
			seed := filepath.Join(root, "seed.db")
			seedDB(t, seed, kvDDL,
				`INSERT INTO kv VALUES ('a', '1', 1), ('b', '2', 2)`,
				`CREATE TABLE _svc_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID`,
				`INSERT INTO _svc_meta VALUES ('applied_index', 2)`)
			path := filepath.Join(dir, "live.db")
			if err := os.Rename(seed, path); err != nil {
				t.Fatal(err)
			}
			s, fl := openStore(t, path, nil)
			fl.allow() // reported below with more context
			if got := s.AppliedIndex(); got != 2 {
				t.Fatalf("AppliedIndex = %d, want 2", got)
			}
			before := digest(t, s)

			err := s.Restore(bytes.NewReader(bytes.Repeat([]byte("garbage!"), 1024)))
			if err == nil {
				t.Fatal("Restore accepted garbage")
			}
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				if e.Name() != tc.dir {
					t.Errorf("Restore created %s outside the store's directory", filepath.Join(root, e.Name()))
				}
			}
			if fatals := fl.list(); len(fatals) != 0 {
				t.Fatalf("garbage upload passed the check and reached the swap; the live database is lost (stalls: %+v)", fatals)
			}
			if got := digest(t, s); !reflect.DeepEqual(got, before) {
				t.Errorf("live database changed by a rejected Restore")
			}

			if err := s.Restore(bytes.NewReader(valid)); err != nil {
				t.Fatalf("Restore of a valid snapshot: %v", err)
			}
			if got, want := kvKeys(t, s), []string{"from-snapshot"}; !slices.Equal(got, want) {
				t.Errorf("keys after Restore = %v, want %v", got, want)
			}
		})
	}
}

func TestRestoreAfterClose(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "live.db"), nil)
	sn, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	data := writeSnapshot(t, sn)
	sn.Release()
	closeStore(t, s)

	if _, err := s.Snapshot(); !errors.Is(err, fsm.ErrClosed) {
		t.Errorf("Snapshot after Close = %v, want ErrClosed", err)
	}
	if err := s.Restore(bytes.NewReader(data)); err == nil {
		t.Errorf("Restore after Close succeeded")
	}
	if err := s.View(context.Background(), func(*fsm.Reader) error { return nil }); !errors.Is(err, fsm.ErrClosed) {
		t.Errorf("View after Close+Restore = %v, want ErrClosed: Restore reopened a closed store", err)
	}
}
