package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"svcd/cluster"
	"svcd/internal/progress"
)

const verifyHelp = `usage: svcd repair verify [--dir DIR]

Checks the files of a stopped node the way a start checks them, and more,
without changing them:

  Raft log         raft/raft.db: its structure, every entry (index, term,
                   type, each command's checksum), the stored term and vote
  newest snapshot  its metadata, how the log continues it, and its state
                   read whole against its CRC-64 and its checksum trailer
  database         data.db: SQLite's integrity_check, and that it has not
                   applied entries the Raft state no longer holds

It prints one line per check and, for what is damaged, the command that
repairs it (docs/operations.md). The exit status is 0 when everything is
intact, 1 otherwise. It refuses to run while a node uses DIR. A long check
shows its progress on standard error: a bar on a terminal, else a line
every 5 s (SVC_PROGRESS_INTERVAL).

Options:
  --dir DIR   the data directory (default: SVC_DATA_DIR, else ./svc_data)
`

func runRepairVerify(args []string) error {
	dataDir, err := repairFlags("verify", args, nil)
	if err != nil {
		return err
	}
	if err := checkStopped(dataDir); err != nil {
		return err
	}
	raftDir := filepath.Join(dataDir, "raft")
	damaged := 0
	line := func(check, status string) { fmt.Printf("%-16s %s\n", check, status) }
	fail := func(check string, err error, repair string) {
		damaged++
		line(check, "DAMAGED: "+err.Error())
		line("", "repair: "+repair)
	}

	rep, err := verifyLog(raftDir)
	switch {
	case err != nil:
		fail("Raft log", err, raftRepair(dataDir))
	case rep.Last == 0:
		line("Raft log", "ok: no entries")
	default:
		line("Raft log", fmt.Sprintf("ok: entries %d..%d, checked in %s", rep.First, rep.Last, rep.Took.Round(100_000)))
	}

	switch snap, err := verifySnapshot(raftDir); {
	case err != nil:
		fail("newest snapshot", err, raftRepair(dataDir))
	case snap == "":
		line("newest snapshot", "ok: none")
	default:
		line("newest snapshot", "ok: "+snap+": its checksums match")
	}

	dbPath := filepath.Join(dataDir, "data.db")
	prog := cliProgress("checking the database", progress.Options{})
	applied, err := checkDatabaseFile(dbPath)
	prog.Finish(err)
	switch {
	case errors.Is(err, os.ErrNotExist):
		line("database", "ok: no data.db; the next start builds it from the Raft state")
	case err != nil:
		fail("database", err, "svcd repair rebuild-db --dir "+dataDir)
	case rep != nil && applied > max(rep.Last, rep.Snapshot):
		fail("database", fmt.Errorf("%s has applied entry %d, the Raft state ends at entry %d: entries are lost",
			dbPath, applied, max(rep.Last, rep.Snapshot)), raftRepair(dataDir))
	default:
		line("database", fmt.Sprintf("ok: integrity_check passed, applied entry %d", applied))
	}
	if damaged > 0 {
		return fmt.Errorf("repair verify: %d check(s) found damage in %s", damaged, dataDir)
	}
	fmt.Println("everything checked is intact")
	return nil
}

// raftRepair is the repair of damaged Raft state: a member of a cluster of
// several is reseeded; a lone node has no peer to copy from.
func raftRepair(dataDir string) string {
	reseed := "svcd repair reseed --dir " + dataDir
	backup := "restore the data directory from a backup (a lone node has no peer to copy from)"
	servers, ok := cluster.RecordedMembership(filepath.Join(dataDir, "raft"))
	switch {
	case !ok:
		return reseed + " --force for a member of a cluster of several; else " + backup
	case len(servers) < 2 || strings.HasPrefix(servers[0].Addr, "inmem:"):
		return backup
	}
	return reseed
}
