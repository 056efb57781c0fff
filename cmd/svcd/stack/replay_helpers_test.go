package stack_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/password"
	"svcd/engine/token"
	"svcd/fsm"
)

// Helpers shared by the replay tests of this package (determinism and
// snapshots). Names carry a "repl" prefix so they do not collide with other
// test files of the package.

// replPasswordParams are cheap argon2id costs for tests.
var replPasswordParams = password.Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32}

// replTimeout bounds every wait on a node.
const replTimeout = 30 * time.Second

func replLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// replNode is a running stack with a recorder for OnFatal (which would
// otherwise exit the test binary).
type replNode struct {
	*stack.Stack
	fatal *atomic.Value
}

// replOpen opens a node on cfg.DataDir and waits until it is ready.
func replOpen(t *testing.T, cfg stack.Config) *replNode {
	t.Helper()
	return replOpenLog(t, cfg, replLogger())
}

// replLogBuf collects a node's log lines (safe for concurrent writers).
type replLogBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *replLogBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *replLogBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logger returns a logger writing Info and above into l.
func (l *replLogBuf) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// replOpenLog is replOpen with the node logging to log.
func replOpenLog(t *testing.T, cfg stack.Config, log *slog.Logger) *replNode {
	t.Helper()
	if cfg.PasswordParams == (password.Params{}) {
		cfg.PasswordParams = replPasswordParams
	}
	fatal := &atomic.Value{}
	cfg.OnStall = func(st fsm.Stall) { fatal.CompareAndSwap(nil, errors.New(st.Reason)) }
	st, err := stack.Open(cfg, log)
	if err != nil {
		t.Fatalf("stack.Open(%s): %v", cfg.DataDir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), replTimeout)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		st.Close()
		t.Fatalf("WaitReady: %v", err)
	}
	n := &replNode{Stack: st, fatal: fatal}
	n.checkFatal(t)
	return n
}

func (n *replNode) checkFatal(t *testing.T) {
	t.Helper()
	if err, _ := n.fatal.Load().(error); err != nil {
		t.Fatalf("the state machine stopped: %v", err)
	}
}

// close closes the node and fails on errors or a recorded fatal.
func (n *replNode) close(t *testing.T) {
	t.Helper()
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	n.checkFatal(t)
}

// waitApplied waits until the node's replica has applied idx. WaitReady
// alone does not guarantee it (see TestReadyMeansApplied in cluster).
func (n *replNode) waitApplied(t *testing.T, idx uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), replTimeout)
	defer cancel()
	if err := n.Store.WaitApplied(ctx, idx); err != nil {
		t.Fatalf("replica did not reach index %d (at %d): %v", idx, n.Store.AppliedIndex(), err)
	}
}

func replDigest(t *testing.T, s *fsm.Store) map[string]string {
	t.Helper()
	d, err := s.Digest(context.Background())
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	return d
}

// replDiff describes how two digests differ ("" when equal).
func replDiff(a, b map[string]string) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var diff []string
	for k := range keys {
		av, aok := a[k]
		bv, bok := b[k]
		switch {
		case !aok:
			diff = append(diff, k+": only in the second")
		case !bok:
			diff = append(diff, k+": only in the first")
		case av != bv:
			diff = append(diff, k+": "+short(av)+" != "+short(bv))
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, "; ")
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// replStore is a store with an engine registering its handlers, as a
// node has, but without consensus: the test feeds it log entries.
type replStore struct {
	*fsm.Store
	Engine *engine.Engine
	Auth   *auth.Auth
	fatal  *atomic.Value
}

// replOpenStore opens (creating if needed) the database at path.
func replOpenStore(t *testing.T, path string) *replStore {
	t.Helper()
	fatal := &atomic.Value{}
	var s *fsm.Store
	s, err := fsm.Open(fsm.Options{
		Path:     path,
		Registry: fsm.NewRegistry(),
		Logger:   replLogger(),
		// A replica that stops would wait for ever: record why and
		// close it, so the replay fails instead of hanging.
		OnStall: func(st fsm.Stall) {
			fatal.CompareAndSwap(nil, errors.New(st.Reason))
			go s.Close()
		},
	})
	if err != nil {
		t.Fatalf("fsm.Open(%s): %v", path, err)
	}
	signer, err := token.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatalf("token.NewSigner: %v", err)
	}
	dom, err := stack.NewDomain(stack.DomainOptions{Signer: signer, Options: engine.Options{Store: s, Logger: replLogger(), PasswordParams: replPasswordParams}})
	if err != nil {
		s.Close()
		t.Fatalf("stack.NewDomain: %v", err)
	}
	return &replStore{Store: s, Engine: dom.Engine, Auth: dom.Auth, fatal: fatal}
}

func (s *replStore) checkFatal(t *testing.T, what string) {
	t.Helper()
	if err, _ := s.fatal.Load().(error); err != nil {
		t.Fatalf("%s: the state machine stopped: %v", what, err)
	}
}

// replDigestFile digests the database of a closed node.
func replDigestFile(t *testing.T, path string) (map[string]string, uint64) {
	t.Helper()
	s := replOpenStore(t, path)
	defer s.Close()
	return replDigest(t, s.Store), s.AppliedIndex()
}

// replReadLog reads every entry of a closed node's Raft log and converts
// the ones the state machine sees (commands and configurations) to
// fsm.Entry. It returns the log's first index too.
func replReadLog(t *testing.T, dataDir string) (entries []fsm.Entry, first, last uint64) {
	t.Helper()
	logs, err := raftboltdb.New(raftboltdb.Options{
		Path:        filepath.Join(dataDir, "raft", "raft.db"),
		BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatalf("open raft log: %v", err)
	}
	defer logs.Close()
	if first, err = logs.FirstIndex(); err != nil {
		t.Fatal(err)
	}
	if last, err = logs.LastIndex(); err != nil {
		t.Fatal(err)
	}
	for i := first; i <= last && first > 0; i++ {
		var l raft.Log
		if err := logs.GetLog(i, &l); err != nil {
			t.Fatalf("raft log entry %d: %v", i, err)
		}
		switch l.Type {
		case raft.LogCommand:
			entries = append(entries, fsm.Entry{Index: l.Index, Data: l.Data})
		case raft.LogConfiguration:
			entries = append(entries, fsm.Entry{Index: l.Index, Membership: true})
		}
	}
	return entries, first, last
}

// replOutcome renders a command's outcome so that two replicas (and the
// proposer) can be compared: "ok", or the domain error's kind and text.
func replOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	if de := engine.AsError(err); de != nil {
		return fmt.Sprintf("kind %d: %s", de.Kind, de.Error())
	}
	return "error: " + err.Error()
}

// replRemoveDB deletes a database file with its WAL and shared memory.
func replRemoveDB(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}
