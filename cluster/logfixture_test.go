package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"svcd/cluster"
	"svcd/fsm"
)

// The Raft directory of a real node, for the tests of damaged files: a
// single node applied fixtureEntries puts whose keys are long and unique
// (fixtureKey), took a snapshot after the first fixtureSnapAt and kept
// fixtureTrailing entries before it, so raft.db holds several leaf pages,
// free pages and a log that starts after index 1, and snapshots/ holds
// one snapshot.
const (
	fixtureEntries  = 120
	fixtureSnapAt   = 80
	fixtureTrailing = 16
)

// fixtureKey is the payload of the i-th put: unique, and findable in the
// file.
func fixtureKey(i int) string {
	return fmt.Sprintf("fixture-key-%04d-%s", i, strings.Repeat("x", 96))
}

// logFixture holds a built fixture.
type logFixture struct {
	dir     string            // the node's data directory (raft/ and data.db)
	indexes map[string]uint64 // payload -> log index
}

// raftDir is the fixture's Raft directory.
func (f *logFixture) raftDir() string { return filepath.Join(f.dir, "raft") }

// buildLogFixture runs the node in dir and stops it.
func buildLogFixture(tb testing.TB, dir string) *logFixture {
	tb.Helper()
	store, err := openPutStore(filepath.Join(dir, "data.db"))
	if err != nil {
		tb.Fatalf("fixture: %v", err)
	}
	defer store.Close()
	n, err := cluster.Open(cluster.Config{
		NodeID: "fixture", Dir: filepath.Join(dir, "raft"), Logger: quietLogger(),
		SnapshotThreshold: 1 << 30, SnapshotInterval: time.Hour, TrailingLogs: fixtureTrailing,
	}, store)
	if err != nil {
		tb.Fatalf("fixture: open: %v", err)
	}
	defer n.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	if err := n.WaitReady(ctx); err != nil {
		tb.Fatalf("fixture: %v", err)
	}
	f := &logFixture{dir: dir, indexes: map[string]uint64{}}
	for i := range fixtureEntries {
		if i == fixtureSnapAt {
			if _, _, _, err := n.Snapshot(); err != nil {
				tb.Fatalf("fixture: snapshot: %v", err)
			}
		}
		_, idx, err := n.Apply(ctx, put(fixtureKey(i)))
		if err != nil {
			tb.Fatalf("fixture: apply: %v", err)
		}
		f.indexes[fixtureKey(i)] = idx
	}
	return f
}

// openPutStore is a state machine whose puts change nothing: the fixture
// is about the log.
func openPutStore(path string) (*fsm.Store, error) {
	r := fsm.NewRegistry()
	r.Register(typePut, "put", func(tx *fsm.Tx, c fsm.Command) (any, error) { return "ok", nil })
	return fsm.Open(fsm.Options{Path: path, Registry: r, Logger: quietLogger()})
}

// copyDir copies the regular files and directories under src to dst.
func copyDir(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		tb.Fatalf("copy %s: %v", src, err)
	}
}

// findAll returns the offsets of needle in the file: a live entry and,
// since bbolt copies a page on write, stale copies of it in free pages.
func findAll(tb testing.TB, path string, needle []byte) []int64 {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []int64
	for off := 0; ; {
		i := bytes.Index(b[off:], needle)
		if i < 0 {
			break
		}
		out = append(out, int64(off+i))
		off += i + 1
	}
	if len(out) == 0 {
		tb.Fatalf("%q is not in %s", needle, path)
	}
	return out
}

// patchFile writes b at off in path.
func patchFile(tb testing.TB, path string, off int64, b []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		tb.Fatal(err)
	}
}
