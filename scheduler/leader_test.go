package scheduler

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type flag struct{ v atomic.Bool }

func (f *flag) IsLeader() bool { return f.v.Load() }

type recorder struct {
	mu     sync.Mutex
	events []bool
	ctxs   []context.Context
}

func (r *recorder) Name() string { return "rec" }
func (r *recorder) SetEnabled(ctx context.Context, on bool) {
	r.mu.Lock()
	r.events = append(r.events, on)
	r.ctxs = append(r.ctxs, ctx)
	r.mu.Unlock()
}
func (r *recorder) snapshot() ([]bool, []context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bool(nil), r.events...), append([]context.Context(nil), r.ctxs...)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestLoopFollowsLeadership(t *testing.T) {
	var lead flag
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	loop := NewLoop(&lead, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Millisecond, rec)
	go func() { loop.Run(ctx); close(done) }()

	lead.v.Store(true)
	waitFor(t, func() bool { ev, _ := rec.snapshot(); return len(ev) == 1 && ev[0] })
	lead.v.Store(false)
	waitFor(t, func() bool { ev, _ := rec.snapshot(); return len(ev) == 2 && !ev[1] })
	_, ctxs := rec.snapshot()
	if ctxs[0].Err() == nil {
		t.Fatal("leader context still live after leadership was lost")
	}
	lead.v.Store(true)
	waitFor(t, func() bool { ev, _ := rec.snapshot(); return len(ev) == 3 && ev[2] })
	cancel()
	<-done
	ev, _ := rec.snapshot()
	if len(ev) != 4 || ev[3] {
		t.Fatalf("shutdown while leading must disable: %v", ev)
	}
}

type fakeMigrating struct {
	calls atomic.Int32
	done  atomic.Bool
	fail  int32
}

func (f *fakeMigrating) Migrated() bool { return f.done.Load() }
func (f *fakeMigrating) Migrate(context.Context) error {
	if f.calls.Add(1) <= f.fail {
		return context.DeadlineExceeded
	}
	f.done.Store(true)
	return nil
}

func TestMigratorRetriesUntilMigrated(t *testing.T) {
	f := &fakeMigrating{fail: 2}
	m := &Migrator{M: f, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.SetEnabled(ctx, true)
	waitFor(t, f.done.Load)
	if f.calls.Load() != 3 {
		t.Fatalf("calls = %d, want 3", f.calls.Load())
	}
}
