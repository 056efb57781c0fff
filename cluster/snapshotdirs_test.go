package cluster_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"svcd/cluster"
)

// syncBuffer collects a node's log lines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOpenRemovesStaleSnapshotDirs: the half-written snapshot directories
// that failed snapshots of an earlier run left under raft/snapshots/ are
// removed when the node opens, and the log names them; the complete
// snapshot stays and the node starts from it with its data.
func TestOpenRemovesStaleSnapshotDirs(t *testing.T) {
	dir := t.TempDir()
	raftDir := filepath.Join(dir, "raft")
	cfg := cluster.Config{NodeID: "tidy", Dir: raftDir}

	kv := openKV(t, dir)
	n := openNode(t, cfg, kv)
	ctx := applyCtx(t)
	for i := 0; i < 5; i++ {
		if _, _, err := n.Apply(ctx, put(fmt.Sprintf("s%d", i))); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	if _, _, _, err := n.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	want, _ := kv.rows(t)
	if err := n.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	kv.checkFatal(t)
	kv.Close()

	snapDir := filepath.Join(raftDir, "snapshots")
	complete := snapshotDirs(t, snapDir)
	if len(complete) != 1 || strings.HasSuffix(complete[0], ".tmp") {
		t.Fatalf("snapshot directories %v, want one complete snapshot", complete)
	}
	// What failed snapshots leave: a directory with a meta file and part
	// of a state file, and an empty one.
	stale := []string{"2-40-1700000000000.tmp", "2-41-1700000000001.tmp"}
	if err := os.MkdirAll(filepath.Join(snapDir, stale[0]), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"meta.json": `{"ID":"2-40-1700000000000"}`, "state.bin": "SQLite format 3\x00"} {
		if err := os.WriteFile(filepath.Join(snapDir, stale[0], name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(snapDir, stale[1]), 0o755); err != nil {
		t.Fatal(err)
	}

	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	kv = openKV(t, dir)
	defer kv.Close()
	n = openNode(t, cfg, kv)
	defer n.Shutdown()

	if got := snapshotDirs(t, snapDir); len(got) != 1 || got[0] != complete[0] {
		t.Errorf("snapshot directories after open: %v, want only %v", got, complete)
	}
	l := logs.String()
	if !strings.Contains(l, "removed half-written snapshot directories") {
		t.Errorf("nothing logged about the removed directories:\n%s", l)
	}
	for _, name := range stale {
		if !strings.Contains(l, name) {
			t.Errorf("the log does not name %s:\n%s", name, l)
		}
	}
	if got, _ := kv.rows(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kv after restart = %v, want %v", got, want)
	}
	if _, _, err := n.Apply(ctx, put("after")); err != nil {
		t.Errorf("Apply after restart: %v", err)
	}
	kv.checkFatal(t)
}

// snapshotDirs lists the directories under the snapshot store's folder.
func snapshotDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
