package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/cluster"
	"svcd/fsm"
)

// Command types of the test state machine.
const (
	typePut    fsm.Type = 1 // payload is a key: insert it into kv, bump the counter
	typeRefuse fsm.Type = 2 // always fails with a *refusal
)

// refusal is the handler error of typeRefuse; the test checks that Apply
// hands back this very value.
type refusal struct{ index uint64 }

func (r *refusal) Error() string { return fmt.Sprintf("refused at index %d", r.index) }

// nodeTimeout bounds every wait on the node: a hang fails the test instead
// of the package.
const nodeTimeout = 20 * time.Second

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// kvStore is a real fsm.Store with a tiny "put" handler and a fatal
// recorder (OnFatal runs on the apply goroutine).
type kvStore struct {
	*fsm.Store
	fatal atomic.Value // error
	delay atomic.Int64 // nanoseconds each put sleeps (a slow replica)
}

func openKV(t *testing.T, dir string) *kvStore {
	t.Helper()
	kv := &kvStore{}
	r := fsm.NewRegistry()
	r.Register(typePut, "put", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		if d := kv.delay.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		for _, ddl := range []string{
			`CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, idx INTEGER NOT NULL)`,
			`CREATE TABLE IF NOT EXISTS ctr (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)`,
		} {
			if _, err := tx.ExecDirect(ddl); err != nil {
				return nil, err
			}
		}
		if _, err := tx.Exec(`INSERT INTO kv (k, idx) VALUES (?, ?)`, string(c.Payload), int64(tx.Index())); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`INSERT INTO ctr (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1`); err != nil {
			return nil, err
		}
		return "put:" + string(c.Payload), nil
	})
	r.Register(typeRefuse, "refuse", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		return nil, &refusal{index: tx.Index()}
	})
	s, err := fsm.Open(fsm.Options{
		Path:     filepath.Join(dir, "data.db"),
		Registry: r,
		Logger:   quietLogger(),
		OnStall:  func(st fsm.Stall) { kv.fatal.CompareAndSwap(nil, errors.New(st.Reason)) },
	})
	if err != nil {
		t.Fatalf("fsm.Open: %v", err)
	}
	kv.Store = s
	return kv
}

func (kv *kvStore) checkFatal(t *testing.T) {
	t.Helper()
	if err, _ := kv.fatal.Load().(error); err != nil {
		t.Fatalf("the state machine stopped: %v", err)
	}
}

// rows returns kv as key -> index, and the apply counter.
func (kv *kvStore) rows(t *testing.T) (map[string]uint64, int64) {
	t.Helper()
	out := map[string]uint64{}
	var n int64
	err := kv.ViewTx(context.Background(), func(r *fsm.Reader) error {
		var tables int
		if err := r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('kv', 'ctr')`).Scan(&tables); err != nil {
			return err
		}
		if tables == 0 {
			return nil
		}
		rows, err := r.QueryDirect(`SELECT k, idx FROM kv`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var idx uint64
			if err := rows.Scan(&k, &idx); err != nil {
				return err
			}
			out[k] = idx
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return r.QueryRow(`SELECT COALESCE((SELECT n FROM ctr WHERE id = 1), 0)`).Scan(&n)
	})
	if err != nil {
		t.Fatalf("read kv: %v", err)
	}
	return out, n
}

func openNode(t *testing.T, cfg cluster.Config, sm cluster.StateMachine) *cluster.Node {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	n, err := cluster.Open(cfg, sm)
	if err != nil {
		t.Fatalf("cluster.Open: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	if err := n.WaitReady(ctx); err != nil {
		n.Shutdown()
		t.Fatalf("WaitReady: %v (state %s)", err, n.State())
	}
	return n
}

func put(key string) fsm.Command { return fsm.Command{Type: typePut, Version: 1, Payload: []byte(key)} }

func applyCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenRequiresNodeID(t *testing.T) {
	kv := openKV(t, t.TempDir())
	defer kv.Close()
	if n, err := cluster.Open(cluster.Config{Dir: t.TempDir()}, kv); err == nil {
		n.Shutdown()
		t.Fatal("Open without a node id succeeded")
	}
}

// TestSingleNodeApply: a single-node (in-memory transport) node elects
// itself, becomes ready, and Apply returns the handler's value, a strictly
// increasing log index and the handler's own error value.
func TestSingleNodeApply(t *testing.T) {
	dir := t.TempDir()
	kv := openKV(t, dir)
	defer kv.Close()
	n := openNode(t, cluster.Config{NodeID: "solo", Dir: filepath.Join(dir, "raft")}, kv)
	shut := false
	defer func() {
		if !shut {
			n.Shutdown()
		}
	}()

	if !n.Ready() {
		t.Fatal("Ready() is false after WaitReady returned")
	}
	if !n.IsLeader() || n.State() != "Leader" {
		t.Fatalf("single node is not leader: state %s", n.State())
	}
	if n.LeaderID() != "solo" || n.NodeID() != "solo" {
		t.Fatalf("LeaderID %q, NodeID %q; want solo", n.LeaderID(), n.NodeID())
	}
	ctx := applyCtx(t)

	var last uint64
	want := map[string]uint64{}
	for i := 0; i < 5; i++ {
		key := fmt.Sprintf("k%d", i)
		v, idx, err := n.Apply(ctx, put(key))
		if err != nil {
			t.Fatalf("Apply(put %s): %v", key, err)
		}
		if v != "put:"+key {
			t.Fatalf("Apply(put %s) value = %#v, want %q", key, v, "put:"+key)
		}
		if idx <= last {
			t.Fatalf("Apply(put %s) index %d not above previous %d", key, idx, last)
		}
		last = idx
		want[key] = idx
		if got := kv.AppliedIndex(); got < idx {
			t.Fatalf("Apply returned before the store applied: store at %d, entry %d", got, idx)
		}
	}

	// The handler's error comes back unchanged (same value, not a copy or
	// a wrapper), with the entry's index.
	_, idx, err := n.Apply(ctx, fsm.Command{Type: typeRefuse, Version: 1})
	var ref *refusal
	if !errors.As(err, &ref) || err != error(ref) {
		t.Fatalf("Apply(refuse) error = %#v (%v), want the handler's *refusal itself", err, err)
	}
	if ref.index != idx || idx <= last {
		t.Fatalf("Apply(refuse) index %d (handler saw %d), previous %d", idx, ref.index, last)
	}
	last = idx

	// A constraint error inside the handler: returned, rolled back alone.
	_, idx, err = n.Apply(ctx, put("k0"))
	if err == nil {
		t.Fatal("duplicate put succeeded")
	}
	if errors.Is(err, cluster.ErrNoLeader) || errors.Is(err, cluster.ErrShutdown) || errors.Is(err, cluster.ErrIndeterminate) {
		t.Fatalf("duplicate put returned a cluster error: %v", err)
	}
	if idx <= last {
		t.Fatalf("failed Apply index %d not above previous %d", idx, last)
	}
	last = idx

	got, count := kv.rows(t)
	if fmt.Sprint(got) != fmt.Sprint(want) || count != int64(len(want)) {
		t.Fatalf("kv = %v (counter %d), want %v (counter %d)", got, count, want, len(want))
	}

	// Raft publishes its applied index when it has handed entries to the
	// FSM goroutine, which may be a moment after the future was answered.
	st := n.Stats()
	for deadline := time.Now().Add(2 * time.Second); st.AppliedIndex < last && time.Now().Before(deadline); st = n.Stats() {
		time.Sleep(time.Millisecond)
	}
	if st.Term < 1 || st.CommitIndex < last || st.AppliedIndex < last || st.LastIndex < last {
		t.Fatalf("Stats() = %+v, want term >= 1 and indexes >= %d", st, last)
	}
	if kv.AppliedIndex() != last {
		t.Fatalf("store applied index %d, want %d (the last command)", kv.AppliedIndex(), last)
	}

	if err := n.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	shut = true
	if err := n.Shutdown(); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if _, _, err := n.Apply(context.Background(), put("late")); !errors.Is(err, cluster.ErrShutdown) {
		t.Fatalf("Apply after Shutdown = %v, want ErrShutdown", err)
	}
	kv.checkFatal(t)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestTCPSingleNode: with a real TCP transport and Bootstrap, a lone voter
// elects itself and applies.
func TestTCPSingleNode(t *testing.T) {
	dir := t.TempDir()
	kv := openKV(t, dir)
	defer kv.Close()
	addr := freeAddr(t)
	n := openNode(t, cluster.Config{NodeID: "tcp-1", Dir: filepath.Join(dir, "raft"), RaftAddr: addr, Bootstrap: true}, kv)
	defer n.Shutdown()
	if !n.IsLeader() || n.LeaderID() != "tcp-1" {
		t.Fatalf("TCP node did not elect itself: state %s, leader %q", n.State(), n.LeaderID())
	}
	// The transport really listens on the configured address.
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("raft transport not listening on %s: %v", addr, err)
	}
	c.Close()

	ctx := applyCtx(t)
	var last uint64
	for i := 0; i < 3; i++ {
		v, idx, err := n.Apply(ctx, put(fmt.Sprintf("t%d", i)))
		if err != nil || v != fmt.Sprintf("put:t%d", i) || idx <= last {
			t.Fatalf("Apply #%d = %v, %d, %v (previous index %d)", i, v, idx, err, last)
		}
		last = idx
	}
	if st := n.Stats(); st.CommitIndex < last || st.Term < 1 {
		t.Fatalf("Stats() = %+v after index %d", st, last)
	}
	if err := n.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, _, err := n.Apply(ctx, put("late")); !errors.Is(err, cluster.ErrShutdown) {
		t.Fatalf("Apply after Shutdown = %v, want ErrShutdown", err)
	}
	// The port is released.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("raft port %s still bound after Shutdown: %v", addr, err)
	}
	ln.Close()
	kv.checkFatal(t)
}

// TestConcurrentApplyGroupCommit: 32 goroutines apply at once; every call
// succeeds with its own index and the FSM applies several commands per
// SQLite transaction.
func TestConcurrentApplyGroupCommit(t *testing.T) {
	dir := t.TempDir()
	kv := openKV(t, dir)
	defer kv.Close()
	n := openNode(t, cluster.Config{NodeID: "group", Dir: filepath.Join(dir, "raft")}, kv)
	defer n.Shutdown()
	ctx := applyCtx(t)
	before := kv.BatchStats()

	const workers, each = 32, 16
	type res struct {
		key string
		idx uint64
		err error
		val any
	}
	out := make(chan res, workers*each)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			for i := 0; i < each; i++ {
				key := fmt.Sprintf("w%02d-%02d", w, i)
				v, idx, err := n.Apply(ctx, put(key))
				out <- res{key, idx, err, v}
			}
		}(w)
	}
	close(start)
	wg.Wait()
	close(out)

	seen := map[uint64]string{}
	want := map[string]uint64{}
	for r := range out {
		if r.err != nil {
			t.Errorf("Apply(put %s): %v", r.key, r.err)
			continue
		}
		if r.val != "put:"+r.key {
			t.Errorf("Apply(put %s) value %#v", r.key, r.val)
		}
		if other, dup := seen[r.idx]; dup {
			t.Errorf("index %d returned to both %s and %s", r.idx, other, r.key)
		}
		seen[r.idx] = r.key
		want[r.key] = r.idx
	}
	if t.Failed() {
		return
	}
	got, count := kv.rows(t)
	if len(got) != workers*each || count != workers*each {
		t.Fatalf("kv holds %d rows (counter %d), want %d", len(got), count, workers*each)
	}
	for k, idx := range want {
		if got[k] != idx {
			t.Errorf("row %s applied at index %d, Apply returned %d", k, got[k], idx)
		}
	}
	bs := kv.BatchStats()
	batches, commands := bs.Batches-before.Batches, bs.Commands-before.Commands
	t.Logf("group commit: %d commands in %d SQLite transactions (p50 %.0f, p99 %.0f)", commands, batches, bs.P50, bs.P99)
	if commands != workers*each {
		t.Errorf("BatchStats counted %d commands, want %d", commands, workers*each)
	}
	if batches >= commands || bs.P99 < 2 {
		t.Errorf("no group commit: %d commands in %d batches (p99 %.0f)", commands, batches, bs.P99)
	}
	kv.checkFatal(t)
}

// TestRestartReplaysLog: a restarted node becomes ready only after it has
// applied what its log held, applies nothing twice, and a replica that lost
// its database file is rebuilt from the log.
func TestRestartReplaysLog(t *testing.T) {
	dir := t.TempDir()
	raftDir := filepath.Join(dir, "raft")
	cfg := cluster.Config{NodeID: "restart", Dir: raftDir}

	kv := openKV(t, dir)
	n := openNode(t, cfg, kv)
	ctx := applyCtx(t)
	var last uint64
	for i := 0; i < 20; i++ {
		_, idx, err := n.Apply(ctx, put(fmt.Sprintf("r%02d", i)))
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		last = idx
		if i == 9 {
			// A snapshot in the middle: the restart below must start from it
			// and replay only what follows.
			if si, _, size, err := n.Snapshot(); err != nil || si < idx || size <= 0 {
				t.Fatalf("Snapshot() = index %d size %d err %v; want index >= %d", si, size, err, idx)
			}
		}
	}
	want, _ := kv.rows(t)
	if err := n.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	kv.checkFatal(t)
	kv.Close()

	// Restart over the same database: everything is already applied.
	kv = openKV(t, dir)
	if kv.AppliedIndex() != last {
		t.Fatalf("reopened store at index %d, want %d", kv.AppliedIndex(), last)
	}
	n = openNode(t, cfg, kv)
	got, count := kv.rows(t)
	if fmt.Sprint(got) != fmt.Sprint(want) || count != int64(len(want)) {
		t.Fatalf("after restart kv = %v (counter %d), want %v (counter %d)", got, count, want, len(want))
	}
	_, idx, err := n.Apply(ctx, put("after-restart"))
	if err != nil || idx <= last {
		t.Fatalf("Apply after restart = %d, %v (previous index %d)", idx, err, last)
	}
	last = idx
	want["after-restart"] = idx
	n.Shutdown()
	kv.checkFatal(t)
	kv.Close()

	// Lose the database: the snapshot and the log's tail rebuild it.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(dir, "data.db"+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	kv = openKV(t, dir)
	defer kv.Close()
	n = openNode(t, cfg, kv)
	defer n.Shutdown()
	got, count = kv.rows(t)
	if fmt.Sprint(got) != fmt.Sprint(want) || count != int64(len(want)) {
		t.Fatalf("rebuilt kv = %v (counter %d), want %v (counter %d)", got, count, want, len(want))
	}
	if kv.AppliedIndex() != last {
		t.Fatalf("rebuilt store at index %d, want %d", kv.AppliedIndex(), last)
	}
	kv.checkFatal(t)
}

// TestReadyMeansApplied: Ready must not report true before the state
// machine itself has applied every entry the log held at start. Raft's own
// AppliedIndex advances when entries are handed to the FSM goroutine, not
// when the FSM has applied them, so it cannot be the test of readiness.
func TestReadyMeansApplied(t *testing.T) {
	dir := t.TempDir()
	cfg := cluster.Config{NodeID: "ready", Dir: filepath.Join(dir, "raft")}
	kv := openKV(t, dir)
	n := openNode(t, cfg, kv)
	ctx := applyCtx(t)

	const workers, each = 32, 32
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, _, err := n.Apply(ctx, put(fmt.Sprintf("ready-%02d-%03d", w, i))); err != nil {
					failed.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d applies failed", failed.Load())
	}
	last := kv.AppliedIndex()
	n.Shutdown()
	kv.Close()

	// Without its database the replica must replay the whole log, and it
	// is not ready until it has.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(dir, "data.db"+suffix))
	}
	kv = openKV(t, dir)
	defer kv.Close()
	kv.delay.Store(int64(300 * time.Microsecond)) // replay takes about 0.3 s
	n = openNode(t, cfg, kv)                      // returns once WaitReady does
	defer n.Shutdown()
	if got := kv.AppliedIndex(); got < last {
		t.Errorf("WaitReady returned with the state machine at index %d of %d (raft's applied index %d): "+
			"Ready() trusts raft.AppliedIndex, which counts entries dispatched to the FSM, not applied",
			got, last, n.Stats().AppliedIndex)
	}
	kv.checkFatal(t)
}

// TestReadyAfterIdleRestarts: a log whose last entry is the leader's no-op
// (restarted with no write since) still lets the node become ready; the
// state machine never sees no-op entries, so readiness must not wait for
// the state machine to reach an index it will never apply.
func TestReadyAfterIdleRestarts(t *testing.T) {
	dir := t.TempDir()
	cfg := cluster.Config{NodeID: "idle", Dir: filepath.Join(dir, "raft")}
	kv := openKV(t, dir)
	defer kv.Close()
	n := openNode(t, cfg, kv)
	if _, _, err := n.Apply(applyCtx(t), put("only")); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	applied := kv.AppliedIndex()
	n.Shutdown()
	for i := 0; i < 2; i++ {
		n = openNode(t, cfg, kv) // fails the test if it never becomes ready
		if !n.Ready() {
			t.Fatalf("restart %d: Ready() false after WaitReady", i+1)
		}
		// The new leader appends its term's no-op right after it wins;
		// readiness does not wait for it, so give it a moment.
		deadline := time.Now().Add(2 * time.Second)
		for n.Stats().LastIndex <= applied && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if st := n.Stats(); st.LastIndex <= applied {
			t.Fatalf("restart %d: last index %d, expected the new term's no-op above %d", i+1, st.LastIndex, applied)
		}
		n.Shutdown()
	}
	if kv.AppliedIndex() != applied {
		t.Fatalf("store applied index moved from %d to %d without commands", applied, kv.AppliedIndex())
	}
	got, count := kv.rows(t)
	if len(got) != 1 || count != 1 {
		t.Fatalf("kv = %v (counter %d) after idle restarts", got, count)
	}
	kv.checkFatal(t)
}
