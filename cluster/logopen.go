package cluster

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"svcd/internal/progress"
)

// logLockWait is how long a start waits for another process to release
// the Raft log (bbolt's open timeout).
const logLockWait = 2 * time.Second

// openLog opens the Raft log of cfg.Dir for a start, after checking it:
// a file another process holds is ErrLogLocked; a damaged file, entry or
// stable store value is a *DamageError naming the file and the first bad
// entry, never a panic of bbolt, raft-boltdb or Raft on it. A file worth
// compacting is compacted in between (compact.go).
func openLog(cfg Config) (*raftboltdb.BoltStore, error) {
	path := filepath.Join(cfg.Dir, "raft.db")
	start := time.Now()
	sum, err := scanLockedLog(cfg.Dir, nil)
	if err != nil {
		return nil, err
	}
	if did, err := compactLog(path, compactMinSize); err != nil {
		cfg.Logger.Warn("could not compact the Raft log file", "err", err)
	} else if did {
		cfg.Logger.Info("compacted the Raft log file", "path", path)
	}
	logs, err := openLogStore(path, false)
	if err != nil {
		return nil, err
	}
	if err := checkLogContents(path, logs, sum, nil); err != nil {
		logs.Close()
		return nil, err
	}
	cfg.Logger.Info("checked the Raft log", "path", path, "first", sum.First, "last", sum.Last,
		"took", time.Since(start).Round(time.Microsecond).String())
	return logs, nil
}

// scanLockedLog checks the structure of dir's raft.db (scanLogFile) while
// holding its lock, so no running node writes it meanwhile.
func scanLockedLog(dir string, prog *progress.Reporter) (*logFileSummary, error) {
	release, err := LockLog(dir, logLockWait)
	if err != nil {
		return nil, err
	}
	defer release()
	sum, err := scanLogFile(filepath.Join(dir, "raft.db"), prog)
	if err != nil {
		return nil, err
	}
	return sum, checkGaps(dir, sum)
}

// checkGaps accepts the gaps of dir's log that its newest snapshot covers
// (the missing entries are in it, and Raft never reads them again) and
// names the first other one as damage.
func checkGaps(dir string, sum *logFileSummary) error {
	if len(sum.Gaps) == 0 {
		return nil
	}
	var snapIndex uint64
	snap, err := newestSnapshot(dir)
	if err == nil && snap != nil {
		snapIndex = snap.Meta.Index
	}
	for _, g := range sum.Gaps {
		if snapIndex < g.Next-1 {
			return &DamageError{File: filepath.Join(dir, "raft.db"), Index: g.After + 1,
				What: fmt.Sprintf("entry %d follows entry %d and no snapshot holds the entries between (the newest ends at %d)", g.Next, g.After, snapIndex)}
		}
	}
	return nil
}

// openLogStore opens raft-boltdb on a checked file, read-only for a
// reader (bbolt then takes a shared lock and raft-boltdb writes nothing).
// bbolt's lock timeout means another process holds the file; any other
// failure is damage.
func openLogStore(path string, readOnly bool) (logs *raftboltdb.BoltStore, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			logs, err = nil, &DamageError{File: path, What: fmt.Sprintf("bbolt cannot open it: %v", r)}
		}
	}()
	opts := &bbolt.Options{Timeout: logLockWait, NoFreelistSync: true}
	if readOnly {
		opts = &bbolt.Options{Timeout: logLockWait, ReadOnly: true}
	}
	logs, err = raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: opts})
	switch {
	case errors.Is(err, bbolt.ErrTimeout):
		return nil, fmt.Errorf("%w: %s", ErrLogLocked, path)
	case err != nil:
		return nil, &DamageError{File: path, What: fmt.Sprintf("bbolt cannot open it: %v", err)}
	}
	return logs, nil
}
