package cluster_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"svcd/cluster"
)

// damageCase damages a copy of the fixture; the start must refuse it with
// a *cluster.DamageError naming file (a suffix), index (0: any) and a
// reason containing what.
type damageCase struct {
	name   string
	damage func(t *testing.T, f *logFixture)
	file   string
	index  func(f *logFixture) uint64
	what   string
}

func damageCases() []damageCase {
	logFile := filepath.Join("raft", "raft.db")
	middle := func(f *logFixture) uint64 { return f.indexes[fixtureKey(100)] }
	return []damageCase{
		{
			name: "a changed letter inside a record's entry",
			damage: func(t *testing.T, f *logFixture) {
				path := filepath.Join(f.raftDir(), "raft.db")
				for _, off := range findAll(t, path, []byte(fixtureKey(100))) {
					patchFile(t, path, off+40, []byte{'y'})
				}
			},
			file: logFile, index: middle, what: "checksum",
		},
		{
			name: "1,000 random bytes",
			damage: func(t *testing.T, f *logFixture) {
				path := filepath.Join(f.raftDir(), "raft.db")
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(1, 2))
				for range 1000 {
					b[r.IntN(len(b))] = byte(r.UintN(256))
				}
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			file: logFile,
		},
		{
			name: "both bbolt meta pages",
			damage: func(t *testing.T, f *logFixture) {
				path := filepath.Join(f.raftDir(), "raft.db")
				patchFile(t, path, 16+20, []byte{0x55})
				patchFile(t, path, int64(os.Getpagesize())+16+20, []byte{0x55})
			},
			file: logFile, what: "meta pages",
		},
		{
			name: "a missing entry",
			damage: func(t *testing.T, f *logFixture) {
				withBolt(t, f, func(tx *bbolt.Tx) error {
					return tx.Bucket([]byte("logs")).Delete(indexKey(middle(f)))
				})
			},
			file: logFile, index: middle, what: "follows",
		},
		{
			name: "an unreadable current term",
			damage: func(t *testing.T, f *logFixture) {
				withBolt(t, f, func(tx *bbolt.Tx) error {
					return tx.Bucket([]byte("conf")).Put([]byte("CurrentTerm"), []byte{1, 2, 3})
				})
			},
			file: logFile, what: "stable store",
		},
		{
			name:   "an entry from a later term",
			damage: rewriteEntry(func(l *raft.Log) { l.Term += 100 }),
			file:   logFile, index: middle, what: "above the node's current term",
		},
		{
			name:   "a command entry turned into a membership change",
			damage: rewriteEntry(func(l *raft.Log) { l.Type = raft.LogConfiguration }),
			file:   logFile, index: middle, what: "membership change",
		},
		{
			name:   "a command entry turned into a no-op",
			damage: rewriteEntry(func(l *raft.Log) { l.Type = raft.LogNoop }),
			file:   logFile, index: middle, what: "carrying",
		},
		{
			name: "the newest snapshot's metadata",
			damage: func(t *testing.T, f *logFixture) {
				metas, _ := filepath.Glob(filepath.Join(f.raftDir(), "snapshots", "*", "meta.json"))
				if len(metas) != 1 {
					t.Fatalf("fixture snapshots: %v", metas)
				}
				if err := os.WriteFile(metas[0], []byte(`{"Index": 12, "Te`), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			file: "meta.json", what: "does not decode",
		},
		{
			name: "the snapshot an empty database must be restored from",
			damage: func(t *testing.T, f *logFixture) {
				states, _ := filepath.Glob(filepath.Join(f.raftDir(), "snapshots", "*", "state.bin"))
				if len(states) != 1 {
					t.Fatalf("fixture snapshots: %v", states)
				}
				fi, err := os.Stat(states[0])
				if err != nil {
					t.Fatal(err)
				}
				patchFile(t, states[0], fi.Size()/2, []byte{0xA5})
				for _, p := range []string{"data.db", "data.db-wal", "data.db-shm"} {
					os.Remove(filepath.Join(f.dir, p))
				}
			},
			file: "state.bin", what: "must be rebuilt from this snapshot",
		},
		{
			name: "the snapshots are gone",
			damage: func(t *testing.T, f *logFixture) {
				if err := os.RemoveAll(filepath.Join(f.raftDir(), "snapshots")); err != nil {
					t.Fatal(err)
				}
			},
			file: logFile, what: "no snapshot holds the entries before it",
		},
		{
			name: "the log lost its last entries",
			damage: func(t *testing.T, f *logFixture) {
				withBolt(t, f, func(tx *bbolt.Tx) error {
					c := tx.Bucket([]byte("logs")).Cursor()
					for range 3 {
						if k, _ := c.Last(); k != nil {
							if err := c.Delete(); err != nil {
								return err
							}
						}
					}
					return nil
				})
			},
			file: logFile, what: "entries are lost",
		},
	}
}

// TestStartRefusesDamagedState: every kind of damage to the Raft log or
// the newest snapshot makes the start fail with an error naming the file,
// the entry and the reason (no panic, nothing started); VerifyLog finds
// the same damage in the log and the snapshot; the intact fixture starts.
func TestStartRefusesDamagedState(t *testing.T) {
	base := buildLogFixture(t, t.TempDir())
	t.Run("intact", func(t *testing.T) {
		f := copyFixture(t, base)
		rep, err := cluster.VerifyLog(f.raftDir())
		if err != nil {
			t.Fatalf("VerifyLog: %v", err)
		}
		if rep.Last != base.indexes[fixtureKey(fixtureEntries-1)] || rep.First <= 1 || rep.Snapshot == 0 {
			t.Fatalf("report %+v: want the log to end at the last put, start after 1, and a snapshot", rep)
		}
		store, err := openPutStore(filepath.Join(f.dir, "data.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		n := openNode(t, cluster.Config{NodeID: "fixture", Dir: f.raftDir()}, store)
		n.Shutdown()
	})
	for _, tc := range damageCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := copyFixture(t, base)
			tc.damage(t, f)
			store, err := openPutStore(filepath.Join(f.dir, "data.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			n, err := cluster.Open(cluster.Config{NodeID: "fixture", Dir: f.raftDir(), Logger: quietLogger()}, store)
			if err == nil {
				n.Shutdown()
				t.Fatal("the node started on damaged state")
			}
			checkDamage(t, "start", err, tc, f)
			if tc.name == "the log lost its last entries" {
				return // only the replica's applied index tells
			}
			_, err = cluster.VerifyLog(f.raftDir())
			checkDamage(t, "VerifyLog", err, tc, f)
		})
	}
}

func checkDamage(t *testing.T, stage string, err error, tc damageCase, f *logFixture) {
	t.Helper()
	var de *cluster.DamageError
	if !errors.Is(err, cluster.ErrDamaged) || !errors.As(err, &de) {
		t.Fatalf("%s: %v; want a damage error", stage, err)
	}
	if !strings.HasSuffix(de.File, tc.file) || !strings.Contains(err.Error(), f.dir) {
		t.Errorf("%s: %v; want it to name %s", stage, err, tc.file)
	}
	if tc.index != nil && de.Index != tc.index(f) {
		t.Errorf("%s: %v; want entry %d", stage, err, tc.index(f))
	}
	if !strings.Contains(de.What, tc.what) {
		t.Errorf("%s: %v; want %q in the reason", stage, err, tc.what)
	}
	t.Logf("%s: %v", stage, err)
}

// TestStartLogLocked: a log held by another process is told apart from a
// damaged one.
func TestStartLogLocked(t *testing.T) {
	base := buildLogFixture(t, t.TempDir())
	release, err := cluster.LockLog(base.raftDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	store, err := openPutStore(filepath.Join(base.dir, "data.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	start := time.Now()
	n, err := cluster.Open(cluster.Config{NodeID: "fixture", Dir: base.raftDir(), Logger: quietLogger()}, store)
	if err == nil {
		n.Shutdown()
		t.Fatal("the node started on a locked log")
	}
	if !errors.Is(err, cluster.ErrLogLocked) || errors.Is(err, cluster.ErrDamaged) {
		t.Fatalf("start: %v; want ErrLogLocked", err)
	}
	if _, err := cluster.VerifyLog(base.raftDir()); !errors.Is(err, cluster.ErrLogLocked) {
		t.Fatalf("VerifyLog: %v; want ErrLogLocked", err)
	}
	t.Logf("refused after %s: %v", time.Since(start).Round(time.Millisecond), err)
}

// copyFixture copies the fixture's data directory for one test.
func copyFixture(t *testing.T, base *logFixture) *logFixture {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, base.dir, dir)
	return &logFixture{dir: dir, indexes: base.indexes}
}

// withBolt changes the fixture's raft.db through bbolt.
func withBolt(t *testing.T, f *logFixture, fn func(*bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(f.raftDir(), "raft.db"), 0o600, &bbolt.Options{Timeout: time.Second, NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// rewriteEntry rewrites the fixture's middle entry, changed by fn,
// through raft-boltdb: an entry that decodes but says something else.
func rewriteEntry(fn func(*raft.Log)) func(t *testing.T, f *logFixture) {
	return func(t *testing.T, f *logFixture) {
		t.Helper()
		logs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(f.raftDir(), "raft.db"),
			BoltOptions: &bbolt.Options{Timeout: time.Second, NoFreelistSync: true}})
		if err != nil {
			t.Fatal(err)
		}
		defer logs.Close()
		var l raft.Log
		if err := logs.GetLog(f.indexes[fixtureKey(100)], &l); err != nil {
			t.Fatal(err)
		}
		fn(&l)
		if err := logs.StoreLog(&l); err != nil {
			t.Fatal(err)
		}
	}
}

func indexKey(i uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, i)
}
