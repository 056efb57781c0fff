//go:build unix

package cluster

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// fsizeChildEnv marks the child process of TestFailedSnapshotLeavesNoTempDir,
// which lowers its own file size limit (RLIMIT_FSIZE) to make writes fail
// the way they do on a full disk, without touching the parent test process.
const fsizeChildEnv = "SVCD_TEST_SNAPSHOT_FSIZE_CHILD"

// TestFailedSnapshotLeavesNoTempDir: snapshots that fail because a write
// fails (a sink whose state file cannot be flushed, a Create whose meta
// file cannot be written) leave no <id>.tmp directory, and a snapshot in
// progress meanwhile keeps its directory and completes. The writes fail
// for real, inside raft's own FileSnapshotStore, in a child process whose
// file size limit is lowered (EFBIG stands in for ENOSPC: raft handles
// both the same way).
func TestFailedSnapshotLeavesNoTempDir(t *testing.T) {
	if os.Getenv(fsizeChildEnv) != "" {
		failSnapshotsUnderFileSizeLimit(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailedSnapshotLeavesNoTempDir$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fsizeChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("every failed snapshot cleaned up")) {
		t.Fatalf("child process did not run the scenario:\n%s", out)
	}
}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// setFileSizeLimit sets this process's soft RLIMIT_FSIZE and returns the
// limit it replaced.
func setFileSizeLimit(t *testing.T, limit uint64) (old uint64) {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		t.Fatal(err)
	}
	old, rl.Cur = rl.Cur, limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
	return old
}

func failSnapshotsUnderFileSizeLimit(t *testing.T) {
	base := t.TempDir()
	var logs lockedBuffer
	s, err := openSnapshotStore(base, hclog.NewNullLogger(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "snapshots")
	create := func(index uint64) (raft.SnapshotSink, error) {
		return s.Create(1, index, 1, raft.Configuration{}, 1, nil)
	}

	// A snapshot in progress: it must survive every cleanup below.
	inProgress, err := create(10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inProgress.Write(bytes.Repeat([]byte("a"), 1024)); err != nil {
		t.Fatal(err)
	}
	inProgressDir := inProgress.ID() + ".tmp"

	// A snapshot whose state file fills up: Persist's write fails, then
	// raft's Cancel cannot flush and returns without deleting.
	unlimited := setFileSizeLimit(t, 64<<10)
	full, err := create(11)
	if err != nil {
		t.Fatalf("Create under the limit: %v", err)
	}
	if _, err := full.Write(bytes.Repeat([]byte("b"), 256<<10)); err == nil {
		t.Fatal("writing past the file size limit succeeded: the test proves nothing")
	}
	full.Cancel()
	full.Cancel() // raft cancels again after a failed Persist
	if got := tmpDirs(t, dir); len(got) != 1 || got[0] != inProgressDir {
		t.Errorf("after a failed write: .tmp directories %v, want only the one in progress (%s)", got, inProgressDir)
	}

	// A snapshot whose meta file cannot be written: Create fails after
	// making the directory.
	setFileSizeLimit(t, 16)
	if _, err := create(12); err == nil {
		t.Fatal("Create with a 16-byte file size limit succeeded: the test proves nothing")
	}
	if got := tmpDirs(t, dir); len(got) != 1 || got[0] != inProgressDir {
		t.Errorf("after a failed Create: .tmp directories %v, want only the one in progress (%s)", got, inProgressDir)
	}

	setFileSizeLimit(t, unlimited)
	// Whole 512-byte blocks: what is stored passes checkedSink as a plain
	// database file.
	if _, err := inProgress.Write(bytes.Repeat([]byte("c"), 1024)); err != nil {
		t.Fatal(err)
	}
	if err := inProgress.Close(); err != nil {
		t.Fatalf("the snapshot in progress could not complete: %v", err)
	}
	metas, err := s.List()
	if err != nil || len(metas) != 1 || metas[0].ID != inProgress.ID() || metas[0].Size != 2048 {
		t.Fatalf("List() = %+v, %v; want the completed snapshot %s of 2048 bytes", metas, err, inProgress.ID())
	}
	if got := tmpDirs(t, dir); len(got) != 0 {
		t.Errorf(".tmp directories left: %v", got)
	}
	if l := logs.String(); !strings.Contains(l, "removed half-written snapshot directories") {
		t.Errorf("nothing logged about the removed directories:\n%s", l)
	}
	t.Log("every failed snapshot cleaned up")
}
