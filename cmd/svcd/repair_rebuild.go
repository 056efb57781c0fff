package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

const rebuildHelp = `usage: svcd repair rebuild-db [--dir DIR]

Rebuilds a damaged database file (data.db) from the node's own Raft state.
Use it when the node refuses to start with "the database file is damaged",
or when its state machine stopped on "database disk image is malformed"
(/_/health: "stalled").

It moves data.db, data.db-wal and data.db-shm into
DIR/repair-<time>-rebuild-db/. At its next start the node rebuilds the
database: it restores its newest snapshot and applies the log entries
after it (a cluster member that lags behind also receives entries, or a
snapshot, from the leader). The Raft state, the node id and the key files
stay where they are.

It refuses to run while a node uses DIR, and when the Raft state cannot
rebuild the database (it checks the log and the newest snapshot first, as
svcd repair verify does); docs/operations.md says what to do then.

Options:
  --dir DIR   the data directory (default: SVC_DATA_DIR, else ./svc_data)
`

// dbFiles are the database file and its SQLite companions, relative to
// the data directory.
func dbFiles() []string { return []string{"data.db", "data.db-wal", "data.db-shm"} }

func runRepairRebuildDB(args []string) error {
	dataDir, err := repairFlags("rebuild-db", args, nil)
	if err != nil {
		return err
	}
	if err := checkStopped(dataDir); err != nil {
		return err
	}
	raftDir := filepath.Join(dataDir, "raft")
	rep, err := verifyLog(raftDir)
	if err != nil {
		return fmt.Errorf("repair rebuild-db: the Raft state cannot rebuild the database: %w "+
			"(docs/operations.md: a cluster member is reseeded, a lone node restored from a backup)", err)
	}
	if rep.Last == 0 && rep.Snapshot == 0 {
		return errors.New("repair rebuild-db: this node holds no Raft state to rebuild the database from")
	}
	if rep.First != 1 {
		// The entries before the log's first are only in the snapshot:
		// the rebuild restores it, so it must be whole.
		if _, err := verifySnapshot(raftDir); err != nil {
			return fmt.Errorf("repair rebuild-db: the snapshot the database would be rebuilt from is damaged: %w "+
				"(docs/operations.md)", err)
		}
	}
	release, err := lockDataDir(dataDir)
	if err != nil {
		return err
	}
	aside, moved, err := moveAside(dataDir, "rebuild-db", dbFiles())
	release()
	if err != nil {
		return err
	}
	if len(moved) == 0 {
		fmt.Printf("no database file in %s: the next start builds it from the Raft state\n", dataDir)
		return nil
	}
	fmt.Printf("moved %s aside to %s\n", strings.Join(moved, ", "), aside)
	var from []string
	if rep.Snapshot > 0 {
		from = append(from, fmt.Sprintf("the snapshot of entry %d", rep.Snapshot))
	}
	if rep.Last > 0 {
		from = append(from, fmt.Sprintf("log entries %d..%d", rep.First, rep.Last))
	}
	fmt.Printf("the next start of this node rebuilds the database from %s.\n", strings.Join(from, " and "))
	fmt.Printf("once the node is ready (in a cluster: its digest equals the others'), delete %s\n", aside)
	return nil
}
