package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMoveAside: the entries that exist move under the same relative paths
// into one new directory per repair; missing ones are skipped; a second
// repair in the same second gets a directory of its own.
func TestMoveAside(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"data.db", "data.db-wal", "raft/raft.db", "raft/snapshots/1-2-3/meta.json", "jwt.key"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	aside, moved, err := moveAside(dir, "reseed", append([]string{"raft/raft.db", "raft/snapshots"}, dbFiles()...))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"raft/raft.db", "raft/snapshots", "data.db", "data.db-wal"}; !slices.Equal(moved, want) {
		t.Fatalf("moved %v, want %v", moved, want)
	}
	for _, f := range moved {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s is still in place", f)
		}
	}
	if b, err := os.ReadFile(filepath.Join(aside, "raft/snapshots/1-2-3/meta.json")); err != nil || string(b) != "raft/snapshots/1-2-3/meta.json" {
		t.Errorf("the snapshot did not move whole: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "jwt.key")); err != nil {
		t.Errorf("the key file moved: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	second, _, err := moveAside(dir, "reseed", dbFiles())
	if err != nil || second == aside || !strings.HasPrefix(filepath.Base(second), "repair-") {
		t.Fatalf("second repair: %q (first %q), %v", second, aside, err)
	}
	if none, moved, err := moveAside(dir, "rebuild-db", dbFiles()); err != nil || none != "" || len(moved) != 0 {
		t.Fatalf("nothing to move: %q %v %v", none, moved, err)
	}
}

// TestRepairHelp: every repair command answers --help (status 0, its
// help on stdout), refuses a directory that is not a data directory
// (status 1), and an unknown repair command is a usage error (status 2).
func TestRepairHelp(t *testing.T) {
	for _, cmd := range []string{"verify", "rebuild-db", "reseed"} {
		var out, errOut strings.Builder
		if code := run([]string{"repair", cmd, "--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: svcd repair "+cmd) {
			t.Errorf("repair %s --help: status %d, stdout %q, stderr %q", cmd, code, out.String(), errOut.String())
		}
		out.Reset()
		errOut.Reset()
		code := run([]string{"repair", cmd, "--dir", filepath.Join(t.TempDir(), "none")}, &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), "not a data directory") {
			t.Errorf("%s on a missing directory: status %d, stderr %q", cmd, code, errOut.String())
		}
	}
	var out, errOut strings.Builder
	if code := run([]string{"repair", "bogus"}, &out, &errOut); code != 2 {
		t.Errorf("an unknown repair command: status %d, stderr %q", code, errOut.String())
	}
}
