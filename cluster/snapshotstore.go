package cluster

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// hashicorp/raft's FileSnapshotStore writes a snapshot (taken here, or
// received from the leader) into <Dir>/snapshots/<id>.tmp and renames the
// directory once it is complete. When writing fails, as on a full disk, the
// .tmp directory can stay: Create returns its error after making the
// directory when the meta file cannot be written, and a sink's Cancel
// returns without deleting when its state file cannot be flushed. Nothing
// else ever removes them, so each failed snapshot leaves one behind.
//
// tidySnapshotStore removes them: every one when the node opens (raft has
// not started, so none is being written), and after each failed snapshot
// (Create fails, a sink is cancelled or fails to close) every one that no
// snapshot in progress is writing. It knows which those are because every
// snapshot is created through it.

// snapshotTmpSuffix is the suffix of a snapshot directory being written
// (raft's tmpSuffix).
const snapshotTmpSuffix = ".tmp"

// snapshotsRetained is how many complete snapshots the store keeps.
const snapshotsRetained = 2

// tidySnapshotStore is raft's file snapshot store that removes the
// directories of failed snapshots.
type tidySnapshotStore struct {
	*raft.FileSnapshotStore
	dir string // the store's snapshots/ directory
	log *slog.Logger

	// mu is held across Create and every sweep, so a sweep never sees the
	// directory of a snapshot that is being created and not yet recorded.
	mu sync.Mutex
	// writing counts the open sinks by directory name (<id>.tmp).
	writing map[string]int
}

var _ raft.SnapshotStore = (*tidySnapshotStore)(nil)

// openSnapshotStore opens the snapshot store under base (the node's Raft
// directory) and removes the half-written snapshot directories left by an
// earlier run. Call it before raft starts.
func openSnapshotStore(base string, hl hclog.Logger, log *slog.Logger) (*tidySnapshotStore, error) {
	fs, err := raft.NewFileSnapshotStoreWithLogger(base, snapshotsRetained, hl)
	if err != nil {
		return nil, err
	}
	s := &tidySnapshotStore{
		FileSnapshotStore: fs,
		dir:               filepath.Join(base, "snapshots"),
		log:               log,
		writing:           map[string]int{},
	}
	s.mu.Lock()
	s.sweepLocked("node start")
	s.mu.Unlock()
	return s, nil
}

// Create starts a snapshot. If raft's store fails to, the directory it
// may have made is removed.
func (s *tidySnapshotStore) Create(version raft.SnapshotVersion, index, term uint64,
	configuration raft.Configuration, configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sink, err := s.FileSnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		s.sweepLocked("snapshot create failed")
		return nil, err
	}
	name := sink.ID() + snapshotTmpSuffix
	s.writing[name]++
	return &tidySink{SnapshotSink: newCheckedSink(sink), store: s, name: name}, nil
}

// ended records that the sink stopped writing and, if its snapshot failed,
// removes every half-written directory no other sink is writing (its own
// included).
func (s *tidySnapshotStore) ended(k *tidySink, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k.ended {
		return
	}
	k.ended = true
	if s.writing[k.name]--; s.writing[k.name] <= 0 {
		delete(s.writing, k.name)
	}
	if failed {
		s.sweepLocked("snapshot failed")
	}
}

// sweepLocked removes every <id>.tmp directory that no open sink writes.
func (s *tidySnapshotStore) sweepLocked(when string) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		s.log.Warn("cannot list the snapshot directory", "dir", s.dir, "err", err)
		return
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasSuffix(name, snapshotTmpSuffix) || s.writing[name] > 0 {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, name)); err != nil {
			s.log.Warn("cannot remove a half-written snapshot directory", "dir", filepath.Join(s.dir, name), "err", err)
			continue
		}
		removed = append(removed, name)
	}
	if len(removed) > 0 {
		s.log.Warn("removed half-written snapshot directories", "when", when, "dir", s.dir, "removed", removed)
	}
}

// tidySink is a snapshot being written through tidySnapshotStore.
type tidySink struct {
	raft.SnapshotSink
	store *tidySnapshotStore
	name  string // its directory while written: <id>.tmp
	ended bool   // guarded by store.mu
}

// Close completes the snapshot; if that fails, its directory is removed.
func (k *tidySink) Close() error {
	err := k.SnapshotSink.Close()
	k.store.ended(k, err != nil)
	return err
}

// Cancel abandons the snapshot and removes its directory even when raft's
// sink could not (it returns early when the state file cannot be flushed).
func (k *tidySink) Cancel() error {
	err := k.SnapshotSink.Cancel()
	k.store.ended(k, true)
	return err
}
