package flags_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"svcd/engine"
	"svcd/engine/flags"
	"svcd/fsm"
	"svcd/fsm/fsmtest"
)

// The module's tests run a real engine on a real store, its commands
// applied one entry at a time as a log would deliver them (fsmtest.Log),
// every command recorded so that a test can replay the log elsewhere.

type env struct {
	t     testing.TB
	store *fsm.Store
	e     *engine.Engine
	f     *flags.Flags
	log   *recLog
	ctx   context.Context
}

// recLog is fsmtest.Log that records every command it applies, and runs
// before (once) ahead of the next one: a write "committed concurrently".
type recLog struct {
	inner  *fsmtest.Log
	mu     sync.Mutex
	cmds   []fsm.Command
	before func()
}

func (l *recLog) Apply(ctx context.Context, cmd fsm.Command) (any, uint64, error) {
	l.mu.Lock()
	before := l.before
	l.before = nil
	l.mu.Unlock()
	if before != nil {
		before()
	}
	l.mu.Lock()
	l.cmds = append(l.cmds, cmd)
	l.mu.Unlock()
	return l.inner.Apply(ctx, cmd)
}

// wire builds an engine and the flags module on store.
func wire(t testing.TB, store *fsm.Store) (*engine.Engine, *flags.Flags) {
	t.Helper()
	e, err := engine.New(engine.Options{Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f, err := flags.New(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	return e, f
}

func newEnv(t testing.TB) *env {
	t.Helper()
	store := fsmtest.Open(t)
	e, f := wire(t, store)
	log := &recLog{inner: &fsmtest.Log{S: store}}
	e.SetProposer(log)
	v := &env{t: t, store: store, e: e, f: f, log: log, ctx: context.Background()}
	if err := e.Migrate(v.ctx); err != nil {
		t.Fatal(err)
	}
	return v
}

func js(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// put creates or replaces a flag, failing the test on error.
func (v *env) put(def map[string]any) *flags.Flag {
	v.t.Helper()
	f, _, _, err := v.f.PutFlag(v.ctx, js(def))
	if err != nil {
		v.t.Fatalf("put flag %v: %v", def["key"], err)
	}
	return f
}

// segment creates or replaces a segment, failing the test on error.
func (v *env) segment(name string, cond any) {
	v.t.Helper()
	if _, _, _, err := v.f.PutSegment(v.ctx, js(map[string]any{"name": name, "conditions": cond})); err != nil {
		v.t.Fatalf("put segment %s: %v", name, err)
	}
}

// eval evaluates one flag for attrs.
func (v *env) eval(key string, attrs map[string]any) any {
	v.t.Helper()
	out, err := v.f.Evaluate(v.ctx, attrs, []string{key})
	if err != nil {
		v.t.Fatal(err)
	}
	return out[key]
}
