package main

import (
	"flag"
	"path/filepath"
)

// svcd repair verify, rebuild-db and reseed work on the files of a stopped
// node (docs/operations.md says which error calls for which). Each refuses
// to run while a node uses the data directory and moves files aside (into
// DIR/repair-<time>-<command>/) rather than deleting them. Their help
// texts (verifyHelp, rebuildHelp, reseedHelp) list their flags.

// repairFlags parses a repair command's flags: --dir and the command's
// own (add). --help returns flag.ErrHelp (main prints the command's help);
// a mistake is a usage error.
func repairFlags(name string, args []string, add func(*flag.FlagSet)) (dataDir string, err error) {
	fs := flag.NewFlagSet("repair "+name, flag.ContinueOnError)
	dir := fs.String("dir", envOr("SVC_DATA_DIR", "./svc_data"), "data directory (SVC_DATA_DIR)")
	if add != nil {
		add(fs)
	}
	if err := parseArgs(fs, args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	return filepath.Abs(*dir)
}
