package upgrade_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"svcd/jepsen/harness"
)

// previousFile names the file pinning the previous release's commit.
const previousFile = "PREVIOUS"

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// previousCommit reads the pinned commit from PREVIOUS: the first line
// that is neither empty nor a comment.
func previousCommit(t *testing.T) string {
	t.Helper()
	f, err := os.Open(previousFile)
	if err != nil {
		t.Fatalf("previous release: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !commitHash.MatchString(line) {
			t.Fatalf("previous release: %s holds %q, want a full 40-digit commit hash", previousFile, line)
		}
		return line
	}
	t.Fatalf("previous release: %s names no commit", previousFile)
	return ""
}

// previousBinary returns the svcd binary built from commit, building it
// on the first call on this machine: the commit's tree is extracted with
// git archive into a temporary directory and built there with the
// sqlite_fts5 tag; the binary is kept in ~/.cache/svcd/upgrade/svcd-<commit>.
// The commit must be in this clone: a shallow clone fails the test with
// the command that fetches the history.
func previousBinary(t *testing.T, commit string) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatalf("previous release: %v", err)
	}
	cache := filepath.Join(home, ".cache", "svcd", "upgrade")
	bin := filepath.Join(cache, "svcd-"+commit)
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		t.Logf("previous release %.12s: cached binary %s", commit, bin)
		return bin
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatalf("previous release: %v", err)
	}
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		shallow, _ := exec.Command("git", "-C", root, "rev-parse", "--is-shallow-repository").Output()
		t.Fatalf("previous release: commit %s (pinned in jepsen/upgrade/%s) is not in this clone "+
			"(shallow clone: %s); fetch the full history with `git fetch --unshallow` (or clone without --depth), "+
			"then run the test again: %v %s",
			commit, previousFile, strings.TrimSpace(string(shallow)), err, strings.TrimSpace(string(out)))
	}
	src := t.TempDir()
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, commit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("previous release: extract %s: %v\n%s", commit, err, out)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatalf("previous release: %v", err)
	}
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-buildvcs=false", "-o", tmp, "./cmd/svcd")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off")
	t.Logf("previous release %.12s: building svcd (cached afterwards in %s)", commit, cache)
	if out, err := build.CombinedOutput(); err != nil {
		os.Remove(tmp)
		t.Fatalf("previous release: build %s: %v\n%s", commit, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatalf("previous release: %v", err)
	}
	return bin
}
