package stack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/fsm"
)

// TestSnapshotRestoreAndReplay runs a node with frequent snapshots and a
// short log tail, then restarts it over (a) its own database, (b) no
// database, (c) a database far behind the latest snapshot and (d) one a
// few entries behind it: every time the replica ends with the state it had
// (byte-identical digest) and keeps working.
func TestSnapshotRestoreAndReplay(t *testing.T) {
	start := time.Now()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "data.db")
	cfg := stack.Config{
		DataDir:           dir,
		SnapshotThreshold: 50,
		SnapshotInterval:  100 * time.Millisecond,
		TrailingLogs:      20,
	}
	admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	node := replOpen(t, cfg)
	col, _, err := node.Engine.Schema().CreateCollection(ctx, []byte(`{"name": "items", "fields": [
		{"name": "name", "type": "text", "required": true, "searchable": true},
		{"name": "n", "type": "number", "integer": true},
		{"name": "tag", "type": "select", "values": ["red", "green", "blue"]},
		{"name": "code", "type": "text", "unique": true},
		{"name": "doc", "type": "json"}]}`))
	if err != nil {
		t.Fatalf("CreateCollection: %v", err)
	}
	write := func(n *replNode, from, to, workers int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, to-from)
		next := make(chan int)
		for g := 0; g < workers; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					b, _ := json.Marshal(map[string]any{
						"name": fmt.Sprintf("item %d", i), "n": i, "tag": []string{"red", "green", "blue"}[i%3],
						"code": fmt.Sprintf("c%05d", i), "doc": map[string]any{"i": i, "sq": i * i},
					})
					if _, _, err := n.Engine.Records().CreateRecord(ctx, admin, col.ID, b); err != nil {
						errs <- fmt.Errorf("record %d: %w", i, err)
					}
				}
			}()
		}
		for i := from; i < to; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	// copyDB writes the replica's current state to a file, as a backup
	// would, and returns the applied index it holds.
	copyDB := func(n *replNode, path string) uint64 {
		t.Helper()
		sn, err := n.Store.Snapshot()
		if err != nil {
			t.Fatalf("Store.Snapshot: %v", err)
		}
		defer sn.Release()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sn.WriteTo(f); err != nil {
			f.Close()
			t.Fatalf("snapshot WriteTo: %v", err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return sn.Index()
	}

	copyFar := filepath.Join(t.TempDir(), "far.db")
	copyNear := filepath.Join(t.TempDir(), "near.db")

	write(node, 0, 400, 4)
	farIndex := copyDB(node, copyFar) // 100 writes before the end
	write(node, 400, 485, 4)
	nearIndex := copyDB(node, copyNear) // 15 writes before the end, 10 before the snapshot
	write(node, 485, 495, 1)
	snapIndex, _, size, err := node.Node.Snapshot()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		// An automatic snapshot just took the same state.
		snapIndex, size, err = node.Store.AppliedIndex(), 1, nil
	}
	if err != nil || size <= 0 || snapIndex < nearIndex+10 {
		t.Fatalf("Node.Snapshot() = index %d size %d err %v; want index >= %d", snapIndex, size, err, nearIndex+10)
	}
	write(node, 495, 500, 1)
	final := replDigest(t, node.Store)
	finalIndex := node.Store.AppliedIndex()
	if got := countRows(t, node.Store, "items"); got != 500 {
		t.Fatalf("items holds %d records, want 500", got)
	}
	stats := node.Stats()
	node.close(t)
	t.Logf("500 writes: copies at %d and %d, explicit snapshot at %d, last applied %d; %v batches %v commands (%v)",
		farIndex, nearIndex, snapIndex, finalIndex, stats["fsm_batches_total"], stats["fsm_commands_total"], time.Since(start).Round(time.Millisecond))

	// The log was compacted behind the snapshot: a replica missing the
	// early entries can only be rebuilt from the snapshot.
	_, first, last := replReadLog(t, dir)
	if first <= farIndex+1 || first > snapIndex-19 || last < finalIndex {
		t.Fatalf("raft log holds %d..%d; want it compacted to the %d entries before the snapshot at %d (and the copies at %d / %d to need a restore / a replay)",
			first, last, cfg.TrailingLogs, snapIndex, farIndex, nearIndex)
	}
	if first > nearIndex+1 {
		t.Fatalf("raft log starts at %d, after the near copy's index %d + 1: scenario (d) would not exercise the replay", first, nearIndex)
	}

	// (a) Restart over its own database: nothing is applied again.
	t.Run("reopen", func(t *testing.T) {
		node := replOpen(t, cfg)
		defer node.close(t)
		if got := node.Store.AppliedIndex(); got != finalIndex {
			t.Fatalf("applied index %d after restart, want %d", got, finalIndex)
		}
		if d := replDiff(final, replDigest(t, node.Store)); d != "" {
			t.Fatalf("digest changed across a restart: %s", d)
		}
	})
	if t.Failed() {
		return
	}

	// (b) Without its database the replica restores the snapshot and
	// replays the tail after it.
	t.Run("lost database", func(t *testing.T) {
		replRemoveDB(t, dbPath)
		var logs replLogBuf
		node := replOpenLog(t, cfg, logs.logger())
		defer node.close(t)
		t.Logf("when WaitReady returned the replica was at %d of %d", node.Store.AppliedIndex(), finalIndex)
		node.waitApplied(t, finalIndex)
		if got := node.Store.AppliedIndex(); got != finalIndex {
			t.Fatalf("applied index %d, want %d", got, finalIndex)
		}
		if d := replDiff(final, replDigest(t, node.Store)); d != "" {
			t.Fatalf("rebuilt replica differs: %s", d)
		}
		if !strings.Contains(logs.String(), "restoring it") {
			t.Errorf("the node did not report restoring the snapshot; log:\n%s", logs.String())
		}
		if got := countRows(t, node.Store, "items"); got != 500 {
			t.Fatalf("items holds %d records, want 500", got)
		}
		// New writes still work, through the engine's rebuilt caches.
		write(node, 500, 510, 2)
		if _, _, err := node.Engine.Records().CreateRecord(ctx, admin, "items", []byte(`{"name": "dup", "code": "c00001"}`)); err == nil {
			t.Errorf("a duplicate unique value was accepted after restore")
		}
		if _, _, err := node.Engine.Schema().UpdateCollection(ctx, "items", []byte(`{"name": "things"}`)); err != nil {
			t.Fatalf("rename after restore: %v", err)
		}
		final = replDigest(t, node.Store)
		finalIndex = node.Store.AppliedIndex()
	})
	if t.Failed() {
		return
	}

	// restartFrom installs an older copy of the database, restarts the node
	// and checks it converges to the final state, saying how in its log.
	restartFrom := func(t *testing.T, copyPath, what, wantLog string) *replNode {
		installDB(t, copyPath, dbPath)
		var logs replLogBuf
		node := replOpenLog(t, cfg, logs.logger())
		t.Cleanup(func() { node.close(t) })
		t.Logf("when WaitReady returned the replica was at %d of %d", node.Store.AppliedIndex(), finalIndex)
		node.waitApplied(t, finalIndex)
		if d := replDiff(final, replDigest(t, node.Store)); d != "" {
			t.Fatalf("replica restarted from the %s copy differs: %s", what, d)
		}
		if !strings.Contains(logs.String(), wantLog) {
			t.Errorf("the node's log lacks %q; log:\n%s", wantLog, logs.String())
		}
		if got := countRows(t, node.Store, "things"); got != 510 {
			t.Fatalf("things holds %d records, want 510", got)
		}
		return node
	}

	// (c) A database far behind the snapshot (older than the log's first
	// entry): the snapshot replaces it, then the tail is replayed.
	t.Run("old database", func(t *testing.T) {
		restartFrom(t, copyFar, "old", "restoring it")
	})
	if t.Failed() {
		return
	}

	// (d) A database a few entries behind the snapshot, while the log still
	// holds them: the node replays them itself, no restore needed.
	t.Run("slightly old database", func(t *testing.T) {
		node := restartFrom(t, copyNear, "recent", "replayed committed log entries up to the snapshot")
		if _, _, err := node.Engine.Records().CreateRecord(ctx, admin, "things", []byte(`{"name": "last", "code": "zz"}`)); err != nil {
			t.Fatalf("write after replay: %v", err)
		}
	})
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

// installDB replaces the node's database by the file at src.
func installDB(t *testing.T, src, dbPath string) {
	t.Helper()
	replRemoveDB(t, dbPath)
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dbPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func countRows(t *testing.T, s *fsm.Store, table string) int {
	t.Helper()
	var n int
	err := s.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n)
	})
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}
