package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// repairUsage is `svcd repair --help`.
const repairUsage = `usage: svcd repair COMMAND [--dir DIR]

Repairs the files of a stopped node; docs/operations.md says which error
calls for which command. Each command refuses to run while a node uses the
data directory, and moves files aside (into DIR/repair-<time>-<command>/)
rather than deleting them.

Commands:
  verify      check the Raft log, the newest snapshot and the database the
              way a start does, print what was found; exit status 1 on damage
  rebuild-db  for a damaged database file (data.db): move it aside; the next
              start rebuilds it from the node's snapshot and log
  reseed      for a cluster member whose Raft log or snapshots are damaged:
              move them and the database aside; the next start rejoins the
              cluster and receives a snapshot from the leader

Run svcd repair COMMAND --help for the details of one.
`

func runRepair(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, repairUsage)
		return errors.New("repair: which command?")
	}
	switch args[0] {
	case "verify":
		return runRepairVerify(args[1:])
	case "rebuild-db":
		return runRepairRebuildDB(args[1:])
	case "reseed":
		return runRepairReseed(args[1:])
	case "help", "-h", "--help":
		fmt.Print(repairUsage)
		return nil
	}
	fmt.Fprint(os.Stderr, repairUsage)
	return fmt.Errorf("repair: unknown command %q", args[0])
}

// repairFlags parses a repair command's flags: --dir and the command's
// own (add). help is the command's --help text. done is true when --help
// was asked for (it was printed).
func repairFlags(name, help string, args []string, add func(*flag.FlagSet)) (dataDir string, done bool, err error) {
	fs := flag.NewFlagSet("repair "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", envOr("SVC_DATA_DIR", "./svc_data"), "data directory (SVC_DATA_DIR)")
	if add != nil {
		add(fs)
	}
	err = fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Print(help)
		return "", true, nil
	case err != nil:
		return "", false, fmt.Errorf("repair %s: %w\n\n%s", name, err, help)
	case fs.NArg() > 0:
		return "", false, fmt.Errorf("repair %s: unexpected argument %q\n\n%s", name, fs.Arg(0), help)
	}
	dataDir, err = filepath.Abs(*dir)
	return dataDir, false, err
}
