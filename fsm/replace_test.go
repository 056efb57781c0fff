package fsm_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"svcd/fsm"
)

// typeReplace installs the database file its payload names.
const typeReplace fsm.Type = 7

type replacePayload struct {
	Source string `json:"source"`
	// Carry keeps the current database's keys that start with "keep-".
	Carry bool `json:"carry"`
	// Fail makes the handler refuse the command; FailPrepare makes the
	// preparation fail.
	Fail        bool `json:"fail,omitempty"`
	FailPrepare bool `json:"fail_prepare,omitempty"`
}

// replaceRegistry is the test registry with the replace command: the
// copy of the current database goes into dir as aside-<index>.db.
func replaceRegistry(dir string) *fsm.Registry {
	r := testRegistry()
	r.RegisterReplace(typeReplace, "replace", func(c fsm.Command, index uint64) (fsm.Replacement, error) {
		var p replacePayload
		if err := json.Unmarshal(c.Payload, &p); err != nil {
			return fsm.Replacement{}, err
		}
		if p.Fail {
			return fsm.Replacement{}, errRejected
		}
		if _, err := os.Stat(p.Source); err != nil {
			return fsm.Replacement{}, errors.Join(fsm.ErrNotReady, err)
		}
		return fsm.Replacement{
			Source: p.Source,
			Aside:  filepath.Join(dir, "aside-"+itoa(index)+".db"),
			Prepare: func(tx *fsm.Tx) error {
				if p.FailPrepare {
					_, err := tx.Exec(`INSERT INTO no_such_table VALUES (1)`)
					return err
				}
				if !p.Carry {
					return nil
				}
				_, err := tx.Exec(`INSERT OR REPLACE INTO kv (k, v, idx) SELECT k, v, idx FROM prev.kv WHERE k LIKE 'keep-%'`)
				return err
			},
			Result: "replaced",
		}, nil
	})
	return r
}

func itoa(n uint64) string { return string(appendUint(nil, n)) }

func appendUint(b []byte, n uint64) []byte {
	if n >= 10 {
		b = appendUint(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func replaceEntry(idx uint64, p replacePayload) fsm.Entry {
	b, _ := json.Marshal(p)
	return cmdEntry(idx, typeReplace, b)
}

// TestReplaceAtOneIndex: a replace command in the middle of a batch
// installs the file at its index on two replicas alike: the entries
// before it are applied to the old database (and kept only when the
// preparation carries them), the entries after it to the new one; the old
// database is kept aside; one restore event says everything changed.
func TestReplaceAtOneIndex(t *testing.T) {
	dir := t.TempDir()
	base := []fsm.Entry{ddlEntry(1, kvDDL), putEntry(2, "a", "1"), putEntry(3, "b", "1")}
	src, _ := openStore(t, filepath.Join(dir, "src.db"), replaceRegistry(dir))
	mustApply(t, src, base...)
	backup := filepath.Join(dir, "backup.db")
	info, err := src.CopyTo(backup)
	if err != nil || info.Index != 3 {
		t.Fatalf("CopyTo = %+v, %v; want index 3", info, err)
	}
	tail := []fsm.Entry{
		putEntry(4, "c", "1"), putEntry(5, "keep-1", "x"),
		replaceEntry(6, replacePayload{Source: backup, Carry: true}),
		putEntry(7, "d", "after"),
	}
	var digests []map[string]string
	for _, name := range []string{"n1", "n2"} {
		ndir := filepath.Join(dir, name)
		os.MkdirAll(ndir, 0o700)
		s, _ := openStore(t, filepath.Join(ndir, "data.db"), replaceRegistry(ndir))
		var evs eventLog
		s.Observe(evs.observe)
		mustApply(t, s, base...)
		res := mustApply(t, s, tail...)
		if res[2].Value != "replaced" || res[3].Value != "put:d" {
			t.Fatalf("%s: results %+v", name, res)
		}
		if got, want := kvKeys(t, s), []string{"a", "b", "d", "keep-1"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: keys after the replace %v, want %v", name, got, want)
		}
		if s.AppliedIndex() != 7 {
			t.Fatalf("%s: applied %d, want 7", name, s.AppliedIndex())
		}
		var restores []fsm.Event
		for _, b := range evs.all() {
			for _, e := range b {
				if e.Kind == fsm.KindRestore {
					restores = append(restores, e)
				}
			}
		}
		if len(restores) != 1 || restores[0].Index != 6 {
			t.Fatalf("%s: restore events %+v", name, restores)
		}
		if r, ok := restores[0].Data.(*fsm.Replaced); !ok || r.Name != "replace" {
			t.Fatalf("%s: restore event data %#v", name, restores[0].Data)
		}
		aside, err := fsm.InspectFile(filepath.Join(ndir, "aside-6.db"))
		if err != nil || aside.Meta["applied_index"] != 5 {
			t.Fatalf("%s: the copy aside: %+v, %v; want applied index 5", name, aside, err)
		}
		digests = append(digests, digest(t, s))

		// A replay of the whole log (a restart) skips everything.
		for i, r := range apply(t, s, append(append([]fsm.Entry{}, base...), tail...)...) {
			if !r.Skipped {
				t.Fatalf("%s: replayed entry %d applied again", name, i+1)
			}
		}
	}
	if !reflect.DeepEqual(digests[0], digests[1]) {
		t.Fatalf("digests differ:\n%v\n%v", digests[0], digests[1])
	}
}

// TestReplaceReopened: the replaced database is the node's database
// after a restart, and the entries after the replace are applied to it.
func TestReplaceReopened(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.db")
	reg := replaceRegistry(dir)
	s, err := fsm.Open(fsm.Options{Path: path, Registry: reg, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, ddlEntry(1, kvDDL), putEntry(2, "a", "1"))
	backup := filepath.Join(dir, "backup.db")
	if _, err := s.CopyTo(backup); err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, putEntry(3, "b", "1"), replaceEntry(4, replacePayload{Source: backup}))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, _ := openStore(t, path, replaceRegistry(dir))
	if s2.AppliedIndex() != 4 {
		t.Fatalf("applied after reopening: %d, want 4", s2.AppliedIndex())
	}
	res := apply(t, s2, replaceEntry(4, replacePayload{Source: backup}), putEntry(5, "c", "1"))
	if !res[0].Skipped || res[1].Err != nil {
		t.Fatalf("results %+v", res)
	}
	if got := kvKeys(t, s2); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("keys %v", got)
	}
}

// TestReplaceWaitsForItsFile: a node that lacks the file stalls at the
// entry (transient: it retries) and applies it once the file arrives.
func TestReplaceWaitsForItsFile(t *testing.T) {
	dir := t.TempDir()
	s, stalls := openStore(t, filepath.Join(dir, "data.db"), replaceRegistry(dir))
	stalls.allow()
	mustApply(t, s, ddlEntry(1, kvDDL), putEntry(2, "a", "1"))
	backup := filepath.Join(dir, "backup.db")
	if _, err := s.CopyTo(backup); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "late.db")
	mustApply(t, s, putEntry(3, "b", "1"))
	var arrived atomic.Bool
	go func() {
		for len(stalls.list()) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		os.Rename(backup, late)
		arrived.Store(true)
	}()
	res := apply(t, s, replaceEntry(4, replacePayload{Source: late}), putEntry(5, "c", "1"))
	if !arrived.Load() || res[0].Value != "replaced" || res[1].Err != nil {
		t.Fatalf("results %+v (file arrived: %v)", res, arrived.Load())
	}
	st := stalls.list()
	if len(st) == 0 || st[0].Index != 4 || !st[0].Transient {
		t.Fatalf("stalls %+v, want a transient stall at 4", st)
	}
	if s.Stalled() != nil {
		t.Fatalf("still stalled: %+v", s.Stalled())
	}
	if got := kvKeys(t, s); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("keys %v", got)
	}
}

// TestReplaceRefused: a command its handler or its preparation refuses
// answers the error on every node and replaces nothing; its index is
// recorded, so a replay skips it.
func TestReplaceRefused(t *testing.T) {
	dir := t.TempDir()
	s, _ := openStore(t, filepath.Join(dir, "data.db"), replaceRegistry(dir))
	mustApply(t, s, ddlEntry(1, kvDDL), putEntry(2, "a", "1"))
	backup := filepath.Join(dir, "backup.db")
	if _, err := s.CopyTo(backup); err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, putEntry(3, "b", "1"))
	res := apply(t, s,
		replaceEntry(4, replacePayload{Source: backup, Fail: true}),
		replaceEntry(5, replacePayload{Source: backup, FailPrepare: true}),
		putEntry(6, "c", "1"))
	if !errors.Is(res[0].Err, errRejected) || res[1].Err == nil || res[2].Err != nil {
		t.Fatalf("results %+v", res)
	}
	if got := kvKeys(t, s); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("keys %v: a refused replace changed the data", got)
	}
	if s.AppliedIndex() != 6 {
		t.Fatalf("applied %d", s.AppliedIndex())
	}
	if _, err := os.Stat(filepath.Join(dir, "data.db.replace")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the prepared copy was left behind: %v", err)
	}
}
