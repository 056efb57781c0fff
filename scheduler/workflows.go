package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// WorkflowRuns is the workflows module as its leader loop drives it
// (engine/workflows).
type WorkflowRuns interface {
	// DueRuns lists up to limit runs to execute now, and the earliest
	// wake time ahead (zero: none).
	DueRuns(ctx context.Context, limit int) (ids []string, next time.Time, err error)
	// ExecuteRun claims a run and advances it until it parks, completes
	// or fails.
	ExecuteRun(ctx context.Context, id string) error
	// RunsChanged is signalled when runs may have become runnable.
	RunsChanged() <-chan struct{}
}

// Workflows executes workflow runs while this node leads: it looks for
// due runs when enabled, when the module signals a change, at the next
// wake time and at least every Poll, and executes up to Concurrency runs
// at once, each run on one goroutine at a time. When leadership ends,
// the executions' context is cancelled (the code is interrupted) and
// SetEnabled(false) waits for them, at most Drain; the next leader claims
// the runs they left.
type Workflows struct {
	W   WorkflowRuns
	Log *slog.Logger
	// Concurrency is how many runs execute at once (default 4).
	Concurrency int
	// Poll is the longest time between two looks (default 1 s): the
	// wake times are seconds, and a clock a test moves needs a look.
	Poll time.Duration
	// Drain bounds the wait for executions when leadership ends
	// (default 10 s).
	Drain time.Duration

	mu   sync.Mutex
	busy map[string]bool
	// later holds runs whose execution failed (the log was unreachable,
	// say) until they may be tried again.
	later map[string]time.Time
	wg    sync.WaitGroup
}

// retryAfter is how long a run whose execution failed waits.
const retryAfter = time.Second

// Name implements Subsystem.
func (w *Workflows) Name() string { return "workflows" }

// SetEnabled implements Subsystem.
func (w *Workflows) SetEnabled(ctx context.Context, enabled bool) {
	if !enabled {
		w.drain()
		return
	}
	w.mu.Lock()
	if w.busy == nil {
		w.busy = map[string]bool{}
	}
	w.later = map[string]time.Time{}
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.loop(ctx)
	}()
}

// drain waits for the loop and the executions to end, at most Drain.
func (w *Workflows) drain() {
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	d := w.Drain
	if d <= 0 {
		d = 10 * time.Second
	}
	select {
	case <-done:
	case <-time.After(d):
		w.Log.Warn("workflows: executions still running after leadership ended")
	}
}

// loop looks for due runs until ctx ends.
func (w *Workflows) loop(ctx context.Context) {
	conc := w.Concurrency
	if conc <= 0 {
		conc = 4
	}
	poll := w.Poll
	if poll <= 0 {
		poll = time.Second
	}
	slots := make(chan struct{}, conc)
	finished := make(chan struct{}, 1)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-w.W.RunsChanged():
		case <-finished:
		}
		ids, next, err := w.W.DueRuns(ctx, 4*conc)
		if err != nil && ctx.Err() == nil {
			w.Log.Warn("workflows: cannot list due runs", "err", err)
		}
		for _, id := range ids {
			if !w.claim(id) {
				continue
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				w.release(id)
				return
			}
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				defer func() {
					<-slots
					w.release(id)
					select {
					case finished <- struct{}{}:
					default:
					}
				}()
				err := w.W.ExecuteRun(ctx, id)
				if err != nil && ctx.Err() == nil {
					w.Log.Warn("workflows: run execution failed; it is retried", "run", id, "err", err)
					w.postpone(id)
				}
			}()
		}
		wait := poll
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next), 10*time.Millisecond))
		}
		timer.Reset(wait)
	}
}

// claim marks run id busy on this node; false when it already is, or
// waits after a failed execution.
func (w *Workflows) claim(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy[id] {
		return false
	}
	if t, ok := w.later[id]; ok {
		if time.Now().Before(t) {
			return false
		}
		delete(w.later, id)
	}
	w.busy[id] = true
	return true
}

// postpone keeps run id from executing again for retryAfter.
func (w *Workflows) postpone(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.later[id] = time.Now().Add(retryAfter)
}

func (w *Workflows) release(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.busy, id)
}
