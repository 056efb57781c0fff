package cluster

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/raft"

	"svcd/internal/progress"
)

// checkRaftState checks, before Raft starts, what Raft and the replica
// will rely on beyond the log file itself (openLog checked that): the
// newest snapshot is readable (newestSnapshot), the log continues it
// without a gap (Raft panics reading an entry that is not there), and the
// replica has not applied past everything the log and the snapshots hold
// (the log lost entries: new entries would reuse those indexes, and the
// replica would skip them as applied), and the snapshot the start must
// restore, if it must, is whole (prog, nil for none, counts the bytes of
// that read).
func checkRaftState(dir string, logs raft.LogStore, applied uint64, prog *progress.Reporter) error {
	logPath := filepath.Join(dir, "raft.db")
	snap, err := newestSnapshot(dir)
	if err != nil {
		return err
	}
	first, err := logs.FirstIndex()
	if err != nil {
		return fmt.Errorf("cluster: read log: %w", err)
	}
	last, err := logs.LastIndex()
	if err != nil {
		return fmt.Errorf("cluster: read log: %w", err)
	}
	var snapIndex uint64
	if snap != nil {
		snapIndex = snap.Meta.Index
	}
	if last > 0 && first > snapIndex+1 {
		what := fmt.Sprintf("the log starts at entry %d and no snapshot holds the entries before it", first)
		if snap != nil {
			what = fmt.Sprintf("the log starts at entry %d, the newest snapshot (%s) ends at entry %d", first, snap.Dir, snapIndex)
		}
		return &DamageError{File: logPath, Index: snapIndex + 1, What: what}
	}
	if hi := max(last, snapIndex); applied > hi {
		return &DamageError{File: logPath, Index: hi + 1, What: fmt.Sprintf(
			"the database has applied entry %d, but the log and the snapshots end at entry %d: entries are lost", applied, hi)}
	}
	// A replica behind the snapshot whose entries the log no longer holds
	// restores it (reconcile): check it whole first, rather than let Raft
	// fall back to an older snapshot the log may not continue.
	if snap != nil && applied < snapIndex && (first == 0 || first > applied+1) {
		if err := checkSnapshotState(snap, prog); err != nil {
			var de *DamageError
			if errors.As(err, &de) {
				de.What = "the database must be rebuilt from this snapshot, but " + de.What
			}
			return err
		}
	}
	return nil
}

// newRaft is raft.NewRaft, which panics when it cannot read an entry of
// the log while it starts: that becomes a *DamageError naming dir.
func newRaft(dir string, rc *raft.Config, f raft.FSM, logs raft.LogStore, stable raft.StableStore,
	snaps raft.SnapshotStore, trans raft.Transport) (r *raft.Raft, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, &DamageError{File: filepath.Join(dir, "raft.db"), What: fmt.Sprintf("Raft cannot read it: %v", p)}
		}
	}()
	r, err = raft.NewRaft(rc, f, logs, stable, snaps, trans)
	if err != nil && snaps != nil {
		if list, lerr := snaps.List(); lerr == nil && len(list) > 0 && err.Error() == "failed to load any existing snapshots" {
			return nil, &DamageError{File: filepath.Join(dir, "snapshots"), What: "no snapshot could be restored (see the log lines before this one)"}
		}
	}
	return r, err
}
