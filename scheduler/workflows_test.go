package scheduler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// runsFake is the workflows module as the loop sees it: a set of due run
// ids, and an ExecuteRun that records what it was asked and blocks until
// released.
type runsFake struct {
	mu      sync.Mutex
	due     []string
	calls   map[string]int
	running map[string]int
	most    int // most executions at once
	release chan struct{}
	fail    bool
	kick    chan struct{}
}

func newRunsFake(due ...string) *runsFake {
	return &runsFake{due: due, calls: map[string]int{}, running: map[string]int{}, release: make(chan struct{}), kick: make(chan struct{}, 1)}
}

func (f *runsFake) DueRuns(context.Context, int) ([]string, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.due...), time.Time{}, nil
}

func (f *runsFake) ExecuteRun(ctx context.Context, id string) error {
	f.mu.Lock()
	f.calls[id]++
	f.running[id]++
	n := 0
	for _, c := range f.running {
		n += c
	}
	f.most = max(f.most, n)
	fail := f.fail
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running[id]--
		f.mu.Unlock()
	}()
	if fail {
		return errors.New("no leader")
	}
	select {
	case <-f.release:
	case <-ctx.Done():
	}
	return nil
}

func (f *runsFake) RunsChanged() <-chan struct{} { return f.kick }

func (f *runsFake) snapshot() (calls map[string]int, running map[string]int, most int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls, running = map[string]int{}, map[string]int{}
	for k, v := range f.calls {
		calls[k] = v
	}
	for k, v := range f.running {
		running[k] = v
	}
	return calls, running, f.most
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestWorkflowsLoopBoundsAndDedupes: no more than Concurrency runs execute
// at once, a run never twice at once on this node however often it is
// listed, and a kick makes the loop look again at once.
func TestWorkflowsLoopBoundsAndDedupes(t *testing.T) {
	f := newRunsFake("a", "b", "c")
	w := &Workflows{W: f, Log: discard(), Concurrency: 2, Poll: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	w.SetEnabled(ctx, true)
	waitFor(t, func() bool { _, _, most := f.snapshot(); return most == 2 })
	for range 5 {
		select {
		case f.kick <- struct{}{}:
		default: // the loop waits for a free slot, not for kicks
		}
		time.Sleep(5 * time.Millisecond)
	}
	calls, _, most := f.snapshot()
	if most != 2 || len(calls) != 2 {
		t.Fatalf("calls %v, at most %d at once; want two runs, two at once", calls, most)
	}
	// One finishes: the third is taken up, the one still running is not
	// started again.
	f.release <- struct{}{}
	waitFor(t, func() bool { c, _, _ := f.snapshot(); return c["a"]+c["b"]+c["c"] >= 3 && len(c) == 3 })
	_, running, most := f.snapshot()
	for id, n := range running {
		if n > 1 {
			t.Errorf("run %s executes %d times at once", id, n)
		}
	}
	if most > 2 {
		t.Errorf("%d executions at once, want at most 2", most)
	}
	// Leadership ends: the executions' context ends and SetEnabled(false)
	// waits for them.
	cancel()
	w.SetEnabled(context.Background(), false)
	if _, running, _ := f.snapshot(); running["a"]+running["b"]+running["c"] != 0 {
		t.Errorf("executions still running after SetEnabled(false): %v", running)
	}
}

// TestWorkflowsLoopPostponesFailures: a run whose execution failed (no
// leader reachable, say) is not tried again before retryAfter, even when
// kicked.
func TestWorkflowsLoopPostponesFailures(t *testing.T) {
	f := newRunsFake("a")
	f.fail = true
	w := &Workflows{W: f, Log: discard(), Poll: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); w.SetEnabled(context.Background(), false) }()
	w.SetEnabled(ctx, true)
	waitFor(t, func() bool { c, _, _ := f.snapshot(); return c["a"] == 1 })
	for range 10 {
		select {
		case f.kick <- struct{}{}:
		default:
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c, _, _ := f.snapshot(); c["a"] != 1 {
		t.Errorf("a failed run was executed %d times within 200 ms, want once (it waits %s)", c["a"], retryAfter)
	}
	waitFor(t, func() bool { c, _, _ := f.snapshot(); return c["a"] >= 2 })
}
