package fsm_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/fsm"
)

// outcome is the expected Result of one entry.
type outcome struct {
	value   any
	err     error  // matched with errors.Is
	errText string // substring of the error, when no sentinel exists
	skipped bool
}

func checkResults(t *testing.T, entries []fsm.Entry, got []fsm.Result, want []outcome) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		idx := entries[i].Index
		if g.Skipped != w.skipped {
			t.Errorf("index %d: Skipped = %v, want %v", idx, g.Skipped, w.skipped)
		}
		switch {
		case w.err != nil:
			if !errors.Is(g.Err, w.err) {
				t.Errorf("index %d: Err = %v, want %v", idx, g.Err, w.err)
			}
		case w.errText != "":
			if g.Err == nil || !strings.Contains(g.Err.Error(), w.errText) {
				t.Errorf("index %d: Err = %v, want one containing %q", idx, g.Err, w.errText)
			}
		default:
			if g.Err != nil {
				t.Errorf("index %d: unexpected Err %v", idx, g.Err)
			}
		}
		if w.err == nil && w.errText == "" && !reflect.DeepEqual(g.Value, w.value) {
			t.Errorf("index %d: Value = %#v, want %#v", idx, g.Value, w.value)
		}
	}
}

func TestApplyBatchIsolatesFailingCommands(t *testing.T) {
	ok := func(v any) outcome { return outcome{value: v} }
	tests := []struct {
		name     string
		batch    []fsm.Entry // applied after the kv table exists at index 1
		want     []outcome
		wantKeys []string
	}{
		{
			name:     "all succeed",
			batch:    []fsm.Entry{putEntry(2, "a", "1"), putEntry(3, "b", "2"), putEntry(4, "c", "3")},
			want:     []outcome{ok("put:a"), ok("put:b"), ok("put:c")},
			wantKeys: []string{"a", "b", "c"},
		},
		{
			name:     "handler error in the middle",
			batch:    []fsm.Entry{putEntry(2, "a", "1"), cmdEntry(3, typeFail, nil), putEntry(4, "b", "2")},
			want:     []outcome{ok("put:a"), {err: errRejected}, ok("put:b")},
			wantKeys: []string{"a", "b"},
		},
		{
			name:     "panic in the middle",
			batch:    []fsm.Entry{putEntry(2, "a", "1"), cmdEntry(3, typePanic, nil), putEntry(4, "b", "2")},
			want:     []outcome{ok("put:a"), {errText: "panic handler failed at index 3"}, ok("put:b")},
			wantKeys: []string{"a", "b"},
		},
		{
			name: "sql error undoes the command's earlier statements",
			batch: []fsm.Entry{
				putEntry(2, "a", "1"),
				multiEntry(3, "x", "y", "a"), // x and y inserted, then a collides
				multiEntry(4, "p", "q"),
			},
			want:     []outcome{ok("put:a"), {errText: "UNIQUE"}, ok(2)},
			wantKeys: []string{"a", "p", "q"},
		},
		{
			name: "failures at both ends",
			batch: []fsm.Entry{
				cmdEntry(2, typeFail, nil), putEntry(3, "a", "1"), cmdEntry(4, typePanic, nil),
			},
			want:     []outcome{{err: errRejected}, ok("put:a"), {errText: "handler failed"}},
			wantKeys: []string{"a"},
		},
		{
			name: "consecutive failures then success",
			batch: []fsm.Entry{
				cmdEntry(2, typeFail, nil), cmdEntry(3, typePanic, nil), cmdEntry(4, typeFail, nil),
				cmdEntry(5, typePanic, nil), putEntry(6, "z", "9"),
			},
			want: []outcome{
				{err: errRejected}, {errText: "handler failed"}, {err: errRejected},
				{errText: "handler failed"}, ok("put:z"),
			},
			wantKeys: []string{"z"},
		},
		{
			name:     "only failures",
			batch:    []fsm.Entry{cmdEntry(2, typeFail, nil), cmdEntry(3, typePanic, nil)},
			want:     []outcome{{err: errRejected}, {errText: "handler failed"}},
			wantKeys: nil,
		},
		{
			name: "later command sees earlier writes of the same batch",
			batch: []fsm.Entry{
				putEntry(2, "a", "1"), putEntry(3, "a", "dup"), putEntry(4, "b", "2"),
			},
			want:     []outcome{ok("put:a"), {errText: "UNIQUE"}, ok("put:b")},
			wantKeys: []string{"a", "b"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
			mustApply(t, s, ddlEntry(1, kvDDL))
			res := apply(t, s, tc.batch...)
			checkResults(t, tc.batch, res, tc.want)
			if got := kvKeys(t, s); !reflect.DeepEqual(got, tc.wantKeys) {
				t.Errorf("kv keys = %v, want %v", got, tc.wantKeys)
			}
			last := tc.batch[len(tc.batch)-1].Index
			if got := s.AppliedIndex(); got != last {
				t.Errorf("AppliedIndex = %d, want %d (failed commands still consume their index)", got, last)
			}
			// The rows that stayed were written with their own entry index.
			err := s.View(context.Background(), func(r *fsm.Reader) error {
				var bad int
				if err := r.QueryRow(`SELECT count(*) FROM kv WHERE idx < 2 OR idx > ?`, int64(last)).Scan(&bad); err != nil {
					return err
				}
				if bad != 0 {
					return fmt.Errorf("%d rows carry an index outside the batch", bad)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			// The store is still usable after the failures.
			mustApply(t, s, putEntry(last+1, "after", "ok"))
			if got := countRows(t, s, "kv"); got != len(tc.wantKeys)+1 {
				t.Errorf("after next batch: %d rows, want %d", got, len(tc.wantKeys)+1)
			}
		})
	}
}

type observedBatch struct {
	events  []fsm.Event
	applied uint64 // AppliedIndex at the time the observer ran
	visible []bool // whether each event's row was readable (committed) then
}

func TestApplyBatchEvents(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)

	var mu sync.Mutex
	var got []observedBatch
	s.Observe(func(evs []fsm.Event) {
		ob := observedBatch{events: append([]fsm.Event(nil), evs...), applied: s.AppliedIndex()}
		for _, e := range evs {
			if e.Kind != "put" {
				ob.visible = append(ob.visible, true)
				continue
			}
			var n int
			err := s.View(context.Background(), func(r *fsm.Reader) error {
				return r.QueryRow(`SELECT count(*) FROM kv WHERE k = ?`, e.Subject).Scan(&n)
			})
			ob.visible = append(ob.visible, err == nil && n == 1)
		}
		mu.Lock()
		got = append(got, ob)
		mu.Unlock()
	})
	var second eventLog
	s.Observe(second.observe)

	mustApply(t, s, ddlEntry(1, kvDDL))
	apply(t, s,
		putEntry(2, "a", "va"),
		cmdEntry(3, typeFail, nil),
		putEntry(4, "b", "vb"),
		cmdEntry(5, typePanic, nil),
		multiEntry(6, "c", "d"),
		multiEntry(7, "e", "a"), // emits e, then fails on a: e must be dropped
	)
	apply(t, s,
		putEntry(8, "f", "vf"),
		fsm.Entry{Index: 9, Membership: true},
		putEntry(10, "g", "vg"),
	)
	// A batch where every command fails emits nothing.
	apply(t, s, cmdEntry(11, typeFail, nil), cmdEntry(12, typePanic, nil))
	// A replay emits nothing either.
	apply(t, s, putEntry(8, "f", "vf"), putEntry(10, "g", "vg"))

	ev := func(idx uint64, subject string, data any) fsm.Event {
		return fsm.Event{Index: idx, Kind: "put", Subject: subject, Data: data}
	}
	want := []observedBatch{
		{
			events:  []fsm.Event{{Index: 1, Kind: "schema", Subject: kvDDL}},
			applied: 0,
		},
		{
			events: []fsm.Event{
				ev(2, "a", "va"), ev(4, "b", "vb"), ev(6, "c", nil), ev(6, "d", nil),
			},
			applied: 1,
		},
		{
			events:  []fsm.Event{ev(8, "f", "vf"), ev(10, "g", "vg")},
			applied: 7,
		},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("observer called %d times, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].events, want[i].events) {
			t.Errorf("batch %d events:\n got %+v\nwant %+v", i, got[i].events, want[i].events)
		}
		if got[i].applied != want[i].applied {
			t.Errorf("batch %d: observer saw AppliedIndex %d, want %d (events come before waiters are released)",
				i, got[i].applied, want[i].applied)
		}
		for j, v := range got[i].visible {
			if !v {
				t.Errorf("batch %d event %d (%s): row not visible to readers when delivered: not after commit",
					i, j, got[i].events[j].Subject)
			}
		}
	}
	sec := second.all()
	if len(sec) != len(want) {
		t.Fatalf("second observer called %d times, want %d", len(sec), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(sec[i], want[i].events) {
			t.Errorf("second observer batch %d = %+v, want %+v", i, sec[i], want[i].events)
		}
	}
}

func TestApplyBatchReplayAfterReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fsm.db")
	batches := [][]fsm.Entry{
		{ddlEntry(1, kvDDL), putEntry(2, "a", "1")},
		{putEntry(3, "b", "2"), cmdEntry(4, typeFail, nil), putEntry(5, "c", "3")},
		{fsm.Entry{Index: 6, Membership: true}, putEntry(7, "d", "4")},
		{putEntry(8, "e", "5")},
	}

	s1, _ := openStore(t, path, nil)
	for _, b := range batches {
		apply(t, s1, b...)
	}
	wantKeys := []string{"a", "b", "c", "d", "e"}
	if got := kvKeys(t, s1); !reflect.DeepEqual(got, wantKeys) {
		t.Fatalf("keys = %v, want %v", got, wantKeys)
	}
	before := digest(t, s1)
	closeStore(t, s1)

	s2, _ := openStore(t, path, nil)
	if got := s2.AppliedIndex(); got != 8 {
		t.Fatalf("AppliedIndex after reopen = %d, want 8", got)
	}
	var events eventLog
	s2.Observe(events.observe)
	for _, b := range batches {
		res := apply(t, s2, b...)
		for i, r := range res {
			if !r.Skipped || r.Err != nil || r.Value != nil {
				t.Errorf("replayed index %d: %+v, want Skipped only", b[i].Index, r)
			}
		}
	}
	if got := kvKeys(t, s2); !reflect.DeepEqual(got, wantKeys) {
		t.Errorf("keys after replay = %v, want %v", got, wantKeys)
	}
	if got := digest(t, s2); !reflect.DeepEqual(got, before) {
		t.Errorf("replay changed the digest")
	}
	if n := len(events.all()); n != 0 {
		t.Errorf("replay emitted %d event batches", n)
	}
	if st := s2.BatchStats(); st.Batches != 0 || st.Commands != 0 {
		t.Errorf("replay counted in BatchStats: %+v", st)
	}

	// A batch straddling the applied index applies only the new tail.
	res := apply(t, s2, putEntry(7, "d", "4"), putEntry(8, "e", "5"), putEntry(9, "f", "6"), putEntry(10, "g", "7"))
	checkResults(t, []fsm.Entry{{Index: 7}, {Index: 8}, {Index: 9}, {Index: 10}}, res,
		[]outcome{{skipped: true}, {skipped: true}, {value: "put:f"}, {value: "put:g"}})
	if got := s2.AppliedIndex(); got != 10 {
		t.Errorf("AppliedIndex = %d, want 10", got)
	}
	if got := countRows(t, s2, "kv"); got != 7 {
		t.Errorf("%d rows, want 7", got)
	}
	if st := s2.BatchStats(); st.Batches != 1 || st.Commands != 2 {
		t.Errorf("BatchStats = %+v, want 1 batch of 2 commands", st)
	}
	closeStore(t, s2)

	s3, _ := openStore(t, path, nil)
	if got := s3.AppliedIndex(); got != 10 {
		t.Errorf("AppliedIndex after second reopen = %d, want 10", got)
	}
}

func TestApplyBatchNonCommandEntries(t *testing.T) {
	put := putEntry(0, "never", "applied").Data
	tests := []struct {
		name     string
		batch    []fsm.Entry
		wantRows int
		wantCmds uint64
	}{
		{"membership only", []fsm.Entry{{Index: 2, Membership: true}}, 0, 0},
		{"nil data", []fsm.Entry{{Index: 2}}, 0, 0},
		{"empty data", []fsm.Entry{{Index: 2, Data: []byte{}}}, 0, 0},
		{"membership carrying bytes is not decoded", []fsm.Entry{{Index: 2, Membership: true, Data: put}}, 0, 0},
		{"several in a row", []fsm.Entry{{Index: 2, Membership: true}, {Index: 3}, {Index: 4, Membership: true}}, 0, 0},
		{"mixed with commands", []fsm.Entry{{Index: 2, Membership: true}, putEntry(3, "a", "1"), {Index: 4}, putEntry(5, "b", "2"), {Index: 6, Membership: true}}, 2, 2},
		{"gap in indexes", []fsm.Entry{{Index: 5, Membership: true}, {Index: 9}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "fsm.db")
			s, _ := openStore(t, path, nil)
			mustApply(t, s, ddlEntry(1, kvDDL))
			res := apply(t, s, tc.batch...)
			for i, r := range res {
				if r.Err != nil || r.Skipped {
					t.Errorf("index %d: %+v", tc.batch[i].Index, r)
				}
			}
			last := tc.batch[len(tc.batch)-1].Index
			if got := s.AppliedIndex(); got != last {
				t.Errorf("AppliedIndex = %d, want %d", got, last)
			}
			if got := countRows(t, s, "kv"); got != tc.wantRows {
				t.Errorf("%d rows, want %d", got, tc.wantRows)
			}
			if st := s.BatchStats(); st.Commands != 1+tc.wantCmds {
				t.Errorf("BatchStats.Commands = %d, want %d", st.Commands, 1+tc.wantCmds)
			}
			closeStore(t, s)
			s2, _ := openStore(t, path, nil)
			if got := s2.AppliedIndex(); got != last {
				t.Errorf("AppliedIndex after reopen = %d, want %d (not persisted in _svc_meta)", got, last)
			}
		})
	}
}

// waitStall waits until s reports a stall at index, failing after
// opTimeout.
func waitStall(t *testing.T, s *fsm.Store, index uint64) *fsm.Stall {
	t.Helper()
	deadline := time.Now().Add(opTimeout)
	for time.Now().Before(deadline) {
		if st := s.Stalled(); st != nil && st.Index == index {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no stall at index %d (stalled: %+v)", index, s.Stalled())
	return nil
}

// applyAsync runs ApplyBatch in the background; the channel yields its
// results.
func applyAsync(s *fsm.Store, entries ...fsm.Entry) <-chan []fsm.Result {
	ch := make(chan []fsm.Result, 1)
	go func() { ch <- s.ApplyBatch(entries) }()
	return ch
}

// TestApplyBatchNeverSkips: an entry the node cannot apply (damaged, of an
// unknown type without the ignore bit, refused by its handler with
// ErrHalt) is never skipped. The entries before it are applied, the node
// stops at it and says why, and nothing after it is applied, until Close.
// Unknown types with the ignore bit are skipped, as designed.
func TestApplyBatchNeverSkips(t *testing.T) {
	damaged := fsm.Command{Type: typePut, Payload: []byte(`{"k":"evil","v":"1"}`)}.Encode()
	damaged[len(damaged)-3] ^= 0x20 // one letter inside the value changed
	tests := []struct {
		name      string
		entry     fsm.Entry
		want      outcome
		wantStall error // nil: the batch applies whole
	}{
		{
			name:  "unknown type with FlagIgnoreUnknown",
			entry: fsm.Entry{Index: 3, Data: fsm.Command{Type: 99, Flags: fsm.FlagIgnoreUnknown, Payload: []byte("x")}.Encode()},
			want:  outcome{skipped: true, err: fsm.ErrUnknownCommand},
		},
		{
			name:  "unknown type with ignore bit among other flags",
			entry: fsm.Entry{Index: 3, Data: fsm.Command{Type: 99, Flags: 0xFF}.Encode()},
			want:  outcome{skipped: true, err: fsm.ErrUnknownCommand},
		},
		{
			name: "known type with FlagIgnoreUnknown runs normally",
			entry: fsm.Entry{Index: 3, Data: fsm.Command{
				Type: typePut, Flags: fsm.FlagIgnoreUnknown, Payload: []byte(`{"k":"flagged","v":"1"}`),
			}.Encode()},
			want: outcome{value: "put:flagged"},
		},
		{name: "unknown type without the flag", entry: fsm.Entry{Index: 3, Data: fsm.Command{Type: 99, Flags: 0x02}.Encode()}, wantStall: fsm.ErrUnknownCommand},
		{name: "bad magic", entry: fsm.Entry{Index: 3, Data: []byte{0x00, 0, 1, 1, 0}}, wantStall: fsm.ErrBadEnvelope},
		{name: "truncated envelope", entry: fsm.Entry{Index: 3, Data: []byte{0xC1, 0}}, wantStall: fsm.ErrBadEnvelope},
		{name: "a changed byte in the payload", entry: fsm.Entry{Index: 3, Data: damaged}, wantStall: fsm.ErrChecksum},
		{name: "handler error wrapping ErrHalt", entry: cmdEntry(3, typeHalt, nil), wantStall: fsm.ErrHalt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, fl := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
			fl.allow()
			mustApply(t, s, ddlEntry(1, kvDDL))
			batch := []fsm.Entry{putEntry(2, "before", "1"), tc.entry, putEntry(4, "after", "2")}
			if tc.wantStall == nil {
				res := apply(t, s, batch...)
				checkResults(t, batch, res, []outcome{{value: "put:before"}, tc.want, {value: "put:after"}})
				if st := s.Stalled(); st != nil || len(fl.list()) != 0 {
					t.Errorf("stalled: %+v", st)
				}
				return
			}
			done := applyAsync(s, batch...)
			st := waitStall(t, s, 3)
			if st.Transient || !strings.Contains(st.Reason, "entry 3") || !strings.Contains(st.Reason, tc.wantStall.Error()) {
				t.Errorf("stall %+v: want a lasting stall at entry 3 saying %q", st, tc.wantStall)
			}
			if stalls := fl.list(); len(stalls) != 1 || stalls[0].Index != 3 {
				t.Errorf("OnStall calls %+v, want one at index 3", stalls)
			}
			if got := s.AppliedIndex(); got != 2 {
				t.Errorf("AppliedIndex = %d while stopped at 3, want 2", got)
			}
			if got := kvKeys(t, s); !slices.Contains(got, "before") || slices.Contains(got, "after") || slices.Contains(got, "evil") {
				t.Errorf("keys = %v: want the entry before applied and nothing at or after the stop", got)
			}
			select {
			case <-done:
				t.Fatal("ApplyBatch returned while stopped")
			case <-time.After(100 * time.Millisecond):
			}
			closeStore(t, s)
			select {
			case res := <-done:
				if res[0].Err != nil || !errors.Is(res[1].Err, fsm.ErrClosed) || !errors.Is(res[2].Err, fsm.ErrClosed) {
					t.Errorf("results after Close: %+v", res)
				}
			case <-time.After(opTimeout):
				t.Fatal("ApplyBatch did not return after Close")
			}
		})
	}
}

// TestApplyBatchWaitsForItsEnvironment holds the database's write lock
// from another connection so that the batch cannot begin (after the 5 s
// busy timeout): the node stops at the batch, retries by itself, and
// applies it once the lock is released, with no error to anyone.
func TestApplyBatchWaitsForItsEnvironment(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fsm.db")
	s, fl := openStore(t, path, nil)
	fl.allow()
	mustApply(t, s, ddlEntry(1, kvDDL))

	other, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	batch := []fsm.Entry{putEntry(2, "a", "1"), {Index: 3, Membership: true}}
	done := applyAsync(s, batch...)
	st := waitStall(t, s, 2)
	if !st.Transient || !strings.Contains(st.Reason, "begin batch") {
		t.Errorf("stall %+v: want a transient stall about the begin", st)
	}
	if got := s.AppliedIndex(); got != 1 {
		t.Errorf("AppliedIndex = %d, want 1", got)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		checkResults(t, batch, res, []outcome{{value: "put:a"}, {}})
	case <-time.After(2 * opTimeout):
		t.Fatal("ApplyBatch did not resume after the lock was released")
	}
	if st := s.Stalled(); st != nil {
		t.Errorf("still stalled: %+v", st)
	}
	if got := s.AppliedIndex(); got != 3 {
		t.Errorf("AppliedIndex = %d, want 3", got)
	}
	if got := kvKeys(t, s); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("keys = %v after the lock was released", got)
	}
}

func TestApplyBatchAfterSchemaChange(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
	mustApply(t, s, ddlEntry(1, kvDDL), putEntry(2, "a", "1"))
	readV := func(k string) string {
		var v string
		err := s.View(context.Background(), func(r *fsm.Reader) error {
			return r.QueryRow(`SELECT v FROM kv WHERE k = ?`, k).Scan(&v)
		})
		if err != nil {
			t.Fatalf("read %s: %v", k, err)
		}
		return v
	}
	if got := readV("a"); got != "1" {
		t.Fatalf("v = %q", got)
	}
	// Cached statements on both pools must survive the table being rebuilt
	// with another column order.
	mustApply(t, s,
		ddlEntry(3, `DROP TABLE kv`),
		ddlEntry(4, `CREATE TABLE kv (extra TEXT, idx INTEGER NOT NULL, v TEXT NOT NULL, k TEXT PRIMARY KEY)`),
		putEntry(5, "b", "2"),
	)
	mustApply(t, s, ddlEntry(6, `ALTER TABLE kv ADD COLUMN more INTEGER DEFAULT 7`), putEntry(7, "c", "3"))
	if got := readV("b"); got != "2" {
		t.Errorf("v(b) = %q, want 2", got)
	}
	if got := readV("c"); got != "3" {
		t.Errorf("v(c) = %q, want 3", got)
	}
	if got := kvKeys(t, s); !reflect.DeepEqual(got, []string{"b", "c"}) {
		t.Errorf("keys = %v", got)
	}
}

func TestApplyBatchEmptyAndClosed(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
	if res := apply(t, s); len(res) != 0 {
		t.Fatalf("empty batch returned %d results", len(res))
	}
	if got := s.AppliedIndex(); got != 0 {
		t.Fatalf("AppliedIndex = %d after an empty batch", got)
	}
	mustApply(t, s, ddlEntry(1, kvDDL))
	closeStore(t, s)
	res := apply(t, s, putEntry(2, "a", "1"), fsm.Entry{Index: 3, Membership: true})
	for i, r := range res {
		if !errors.Is(r.Err, fsm.ErrClosed) {
			t.Errorf("result %d after Close: %+v, want ErrClosed", i, r)
		}
	}
	if got := s.AppliedIndex(); got != 1 {
		t.Errorf("AppliedIndex = %d after Close, want 1", got)
	}
}

func TestWaitApplied(t *testing.T) {
	t.Parallel()
	waitAsync := func(s *fsm.Store, ctx context.Context, idx uint64) <-chan error {
		ch := make(chan error, 1)
		go func() { ch <- s.WaitApplied(ctx, idx) }()
		return ch
	}
	notYet := func(t *testing.T, ch <-chan error) {
		t.Helper()
		select {
		case err := <-ch:
			t.Fatalf("WaitApplied returned early: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	returns := func(t *testing.T, ch <-chan error) error {
		t.Helper()
		select {
		case err := <-ch:
			return err
		case <-time.After(opTimeout):
			t.Fatal("WaitApplied did not return")
			return nil
		}
	}
	newStore := func(t *testing.T) *fsm.Store {
		s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
		mustApply(t, s, ddlEntry(1, kvDDL))
		return s
	}

	t.Run("already applied", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for _, idx := range []uint64{0, 1} {
			if err := s.WaitApplied(context.Background(), idx); err != nil {
				t.Errorf("WaitApplied(%d) = %v", idx, err)
			}
		}
	})
	t.Run("released exactly when reached", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ch := waitAsync(s, context.Background(), 5)
		notYet(t, ch)
		mustApply(t, s, putEntry(2, "a", "1"), putEntry(3, "b", "1"))
		notYet(t, ch)
		mustApply(t, s, fsm.Entry{Index: 4, Membership: true})
		notYet(t, ch)
		mustApply(t, s, putEntry(5, "c", "1"))
		if err := returns(t, ch); err != nil {
			t.Fatalf("WaitApplied = %v", err)
		}
		if got := s.AppliedIndex(); got < 5 {
			t.Fatalf("released at AppliedIndex %d", got)
		}
	})
	t.Run("released by a batch that jumps past it", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ch := waitAsync(s, context.Background(), 3)
		notYet(t, ch)
		mustApply(t, s, putEntry(2, "a", "1"), putEntry(3, "b", "1"), putEntry(4, "c", "1"), putEntry(5, "d", "1"))
		if err := returns(t, ch); err != nil {
			t.Fatalf("WaitApplied = %v", err)
		}
	})
	t.Run("released by a failing command", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ch := waitAsync(s, context.Background(), 2)
		notYet(t, ch)
		apply(t, s, cmdEntry(2, typeFail, nil))
		if err := returns(t, ch); err != nil {
			t.Fatalf("WaitApplied = %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		start := time.Now() // before the context, whose deadline counts from its creation
		ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
		defer cancel()
		err := s.WaitApplied(ctx, 100)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitApplied = %v, want DeadlineExceeded", err)
		}
		if el := time.Since(start); el < 80*time.Millisecond {
			t.Fatalf("returned after %v, before the deadline", el)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		ch := waitAsync(s, ctx, 100)
		notYet(t, ch)
		cancel()
		if err := returns(t, ch); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitApplied = %v, want Canceled", err)
		}
	})
	t.Run("close", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ch := waitAsync(s, context.Background(), 100)
		notYet(t, ch)
		closeStore(t, s)
		if err := returns(t, ch); !errors.Is(err, fsm.ErrClosed) {
			t.Fatalf("pending WaitApplied = %v, want ErrClosed", err)
		}
		if err := s.WaitApplied(context.Background(), 2); !errors.Is(err, fsm.ErrClosed) {
			t.Errorf("WaitApplied after Close = %v, want ErrClosed", err)
		}
		if err := s.WaitApplied(context.Background(), 1); err != nil {
			t.Errorf("WaitApplied(applied index) after Close = %v, want nil", err)
		}
		if err := s.View(context.Background(), func(*fsm.Reader) error { return nil }); !errors.Is(err, fsm.ErrClosed) {
			t.Errorf("View after Close = %v, want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
	t.Run("many concurrent waiters", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		const last = 200
		var wg sync.WaitGroup
		errs := make(chan error, last)
		for idx := uint64(1); idx <= last; idx++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				defer cancel()
				if err := s.WaitApplied(ctx, idx); err != nil {
					errs <- fmt.Errorf("WaitApplied(%d): %w (applied %d)", idx, err, s.AppliedIndex())
				}
			}()
		}
		for idx := uint64(2); idx <= last; idx += 3 {
			var b []fsm.Entry
			for j := idx; j < idx+3 && j <= last; j++ {
				b = append(b, putEntry(j, fmt.Sprint(j), "v"))
			}
			mustApply(t, s, b...)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func TestBatchStats(t *testing.T) {
	puts := func(from uint64, n int) []fsm.Entry {
		b := make([]fsm.Entry, n)
		for i := range b {
			b[i] = putEntry(from+uint64(i), fmt.Sprint(from+uint64(i)), "v")
		}
		return b
	}
	tests := []struct {
		name  string
		sizes []int // commands per batch; 0 is a membership-only batch
		want  fsm.BatchStats
	}{
		{"none", nil, fsm.BatchStats{Batches: 1, Commands: 1, P50: 1, P99: 1}},
		{"1 16 64", []int{1, 16, 64}, fsm.BatchStats{Batches: 4, Commands: 82, P50: 16, P99: 64}},
		{"membership batches are not counted", []int{0, 5, 0, 0, 3}, fsm.BatchStats{Batches: 3, Commands: 9, P50: 3, P99: 5}},
		{"one to ten", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, fsm.BatchStats{Batches: 11, Commands: 56, P50: 5, P99: 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
			mustApply(t, s, ddlEntry(1, kvDDL)) // a batch of one command
			idx := uint64(2)
			for _, n := range tc.sizes {
				if n == 0 {
					mustApply(t, s, fsm.Entry{Index: idx, Membership: true})
					idx++
					continue
				}
				mustApply(t, s, puts(idx, n)...)
				idx += uint64(n)
			}
			if got := s.BatchStats(); got != tc.want {
				t.Errorf("BatchStats = %+v, want %+v", got, tc.want)
			}
		})
	}

	t.Run("failed and ignored commands count", func(t *testing.T) {
		t.Parallel()
		s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
		mustApply(t, s, ddlEntry(1, kvDDL))
		apply(t, s, cmdEntry(2, typeFail, nil), cmdEntry(3, typePanic, nil),
			fsm.Entry{Index: 4, Data: fsm.Command{Type: 99, Flags: fsm.FlagIgnoreUnknown}.Encode()},
			putEntry(5, "a", "1"), fsm.Entry{Index: 6, Membership: true})
		want := fsm.BatchStats{Batches: 2, Commands: 5, P50: 4, P99: 4}
		if got := s.BatchStats(); got != want {
			t.Errorf("BatchStats = %+v, want %+v", got, want)
		}
	})

	t.Run("percentiles cover the last 1024 batches", func(t *testing.T) {
		t.Parallel()
		s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
		mustApply(t, s, ddlEntry(1, kvDDL))
		idx := uint64(2)
		// 600 batches of 5, then 1024 batches of 2 that push every earlier
		// batch out of the window.
		for i := 0; i < 600; i++ {
			mustApply(t, s, puts(idx, 5)...)
			idx += 5
		}
		for i := 0; i < 1024; i++ {
			mustApply(t, s, puts(idx, 2)...)
			idx += 2
		}
		want := fsm.BatchStats{Batches: 1625, Commands: 1 + 3000 + 2048, P50: 2, P99: 2}
		if got := s.BatchStats(); got != want {
			t.Errorf("BatchStats = %+v, want %+v", got, want)
		}
	})
}

func TestRegistry(t *testing.T) {
	r := fsm.NewRegistry()
	r.Register(1, "put", func(*fsm.Tx, fsm.Command) (any, error) { return nil, nil })
	if got := r.Name(1); got != "put" {
		t.Errorf("Name(1) = %q", got)
	}
	if got := r.Name(9); got != "type-9" {
		t.Errorf("Name(9) = %q, want type-9", got)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "registered twice") {
			t.Errorf("duplicate Register: recovered %v, want a panic", p)
		}
	}()
	r.Register(1, "again", func(*fsm.Tx, fsm.Command) (any, error) { return nil, nil })
}
