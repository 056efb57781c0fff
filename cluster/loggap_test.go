package cluster_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"svcd/cluster"
)

// TestStartAcceptsLogGapUnderSnapshot: a follower that installs a snapshot
// past its last entry keeps its trailing entries and appends after the
// snapshot's index (hashicorp/raft's compaction keeps them), so its log
// skips the indexes the snapshot holds. CI's reseed test met one at its
// next start ("entry 267 follows entry 258"). Such a gap is sound and the
// node starts; a gap the snapshot does not cover is damage naming it.
func TestStartAcceptsLogGapUnderSnapshot(t *testing.T) {
	base := buildLogFixture(t, t.TempDir())
	cut := func(t *testing.T, f *logFixture, from, to uint64) {
		t.Helper()
		logs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(f.raftDir(), "raft.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer logs.Close()
		if err := logs.DeleteRange(from, to); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("covered by the snapshot", func(t *testing.T) {
		f := copyFixture(t, base)
		// Entries of puts 70..74 are older than the snapshot taken
		// before put 80, and newer than the log's first entry.
		cut(t, f, f.indexes[fixtureKey(70)], f.indexes[fixtureKey(74)])
		if _, err := cluster.VerifyLog(f.raftDir()); err != nil {
			t.Fatalf("VerifyLog: %v", err)
		}
		store, err := openPutStore(filepath.Join(f.dir, "data.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		n := openNode(t, cluster.Config{NodeID: "fixture", Dir: f.raftDir()}, store)
		n.Shutdown()
	})
	t.Run("not covered", func(t *testing.T) {
		f := copyFixture(t, base)
		from, to := f.indexes[fixtureKey(100)], f.indexes[fixtureKey(102)]
		cut(t, f, from, to)
		_, err := cluster.VerifyLog(f.raftDir())
		var de *cluster.DamageError
		if !errors.As(err, &de) || de.Index != from || !strings.Contains(de.What, "no snapshot holds the entries between") {
			t.Fatalf("VerifyLog: %v; want damage at entry %d", err, from)
		}
	})
}
