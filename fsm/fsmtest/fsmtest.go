// Package fsmtest helps tests drive a real fsm.Store without a consensus
// layer: a store on a temporary file, and a Log that commits each proposed
// command as the next entry, as a one-node log would deliver it.
package fsmtest

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"svcd/fsm"
)

// Open opens a store in t's temporary directory, closed when t ends; a
// stall fails t.
func Open(t testing.TB) *fsm.Store {
	t.Helper()
	store, err := fsm.Open(fsm.Options{Path: filepath.Join(t.TempDir(), "data.db"), Logger: slog.New(slog.DiscardHandler),
		OnStall: func(st fsm.Stall) { t.Errorf("fsmtest: the state machine stopped: %s", st.Reason) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// Log applies each command to S as the next log entry (an engine's
// Proposer).
type Log struct {
	S   *fsm.Store
	mu  sync.Mutex
	idx uint64
}

// Apply commits cmd as the next entry and returns its result, index and
// error.
func (l *Log) Apply(_ context.Context, cmd fsm.Command) (any, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.idx++
	res := l.S.ApplyBatch([]fsm.Entry{{Index: l.idx, Data: cmd.Encode()}})
	return res[0].Value, l.idx, res[0].Err
}
