package cluster

import (
	"path/filepath"
	"time"

	"svcd/internal/progress"
)

// LogReport is what VerifyLog found in a Raft directory.
type LogReport struct {
	// File is the log file.
	File string
	// First and Last are the log's entries (0: none).
	First, Last uint64
	// Snapshot is the newest snapshot's last entry, SnapshotDir its
	// directory ("" without a snapshot).
	Snapshot    uint64
	SnapshotDir string
	// Took is how long the check took.
	Took time.Duration
}

// VerifyLog checks the Raft state in dir (raft.db and the newest
// snapshot) the way a start with an empty database checks it (openLog,
// checkRaftState), without starting Raft and without writing: the
// structure of the file, every entry through the library's decoding, the
// stable store, the newest snapshot's metadata, how the log continues it,
// and, when the log no longer holds the entries before it, the snapshot
// read whole. Damage is a *DamageError; a log held by a running node is
// ErrLogLocked.
func VerifyLog(dir string) (*LogReport, error) { return VerifyLogProgress(dir, nil) }

// VerifyLogProgress is VerifyLog counting its work on prog (nil: none): the
// bytes of the file's pages (phase "structure"), then the entries
// (phase "entries"), then, when it is read whole, the snapshot's bytes
// (phase "snapshot"). The caller finishes prog.
func VerifyLogProgress(dir string, prog *progress.Reporter) (*LogReport, error) {
	start := time.Now()
	path := filepath.Join(dir, "raft.db")
	prog.Phase("structure", progress.Options{Bytes: true})
	sum, err := scanLockedLog(dir, prog)
	if err != nil {
		return nil, err
	}
	rep := &LogReport{File: path, First: sum.First, Last: sum.Last}
	if sum.Last > 0 || len(sum.Conf) > 0 {
		logs, err := openLogStore(path, true)
		if err != nil {
			return nil, err
		}
		prog.Phase("entries", progress.Options{Unit: "entries", Bytes: true})
		err = checkLogContents(path, logs, sum, prog)
		if err == nil {
			prog.Phase("snapshot", progress.Options{Bytes: true})
			err = checkRaftState(dir, logs, 0, prog)
		}
		logs.Close()
		if err != nil {
			return nil, err
		}
	}
	snap, err := newestSnapshot(dir)
	if err != nil {
		return nil, err
	}
	if snap != nil {
		rep.Snapshot, rep.SnapshotDir = snap.Meta.Index, snap.Dir
	}
	rep.Took = time.Since(start)
	return rep, nil
}
