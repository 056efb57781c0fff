package scheduler

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"
)

// Worker is an enabled queue worker as the dispatcher sees it.
type Worker struct {
	ID          string
	Queue       string
	Code        string
	Concurrency int
}

// Claimed is a queue job a claim gave this node: run it until Until.
type Claimed struct {
	ID      string
	Queue   string
	Attempt int64
	Payload json.RawMessage
	Until   time.Time
}

// QueueWork is the queue module as the dispatcher drives it: the enabled
// workers, claims of due jobs (the apply counts the queue's running jobs
// against the worker's concurrency, or a built-in queue's), completions,
// and a signal that work may have become due.
type QueueWork interface {
	EnabledWorkers(ctx context.Context) ([]Worker, error)
	Claim(ctx context.Context, workerID, queue string, max int, by string) ([]Claimed, error)
	ClaimBuiltin(ctx context.Context, queue string, concurrency, max int, by string) ([]Claimed, error)
	Complete(ctx context.Context, id string, attempt int64, result any, runErr error) error
	Wake() <-chan struct{}
}

// Dispatcher runs queue jobs on the leader: it claims due jobs for each
// enabled worker, up to the worker's concurrency less what this node runs
// for it, runs each with the worker's code (ctx payload, attempt, queue,
// jobId) and completes it through the log; the jobs of built-in queues
// go to their Go handlers the same way (builtin.go). A new leader
// resumes: jobs the old one claimed count against the concurrency until
// they complete or the reaper releases them.
type Dispatcher struct {
	Q    QueueWork
	Code CodeRunner
	// Builtin are the queues whose jobs Go handlers run.
	Builtin []BuiltinQueue
	// Node is this node's id, recorded as the claimant.
	Node string
	Log  *slog.Logger
	// Tick is how often it looks for due jobs besides Wake (0: 200 ms).
	Tick time.Duration

	mu   sync.Mutex
	busy map[string]int // running jobs per worker id (builtinKey for a built-in queue)
	done chan struct{}
	runs sync.WaitGroup
}

// Name implements Subsystem.
func (d *Dispatcher) Name() string { return "queue dispatcher" }

// SetEnabled implements Subsystem. Disabling waits until the loop and its
// runs have stopped (runs are interrupted by the end of leadership; one
// that ended is still completed).
func (d *Dispatcher) SetEnabled(ctx context.Context, enabled bool) {
	if !enabled {
		if d.done != nil {
			<-d.done
			d.runs.Wait()
			d.done = nil
		}
		return
	}
	d.busy = map[string]int{}
	d.done = make(chan struct{})
	go d.loop(ctx, d.done)
}

func (d *Dispatcher) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := d.Tick
	if tick <= 0 {
		tick = 200 * time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	freed := make(chan struct{}, 1)
	for {
		d.dispatch(ctx, freed)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.Q.Wake():
		case <-freed:
		}
	}
}

// dispatch claims and starts what each worker and each built-in queue
// has room for.
func (d *Dispatcher) dispatch(ctx context.Context, freed chan struct{}) {
	d.dispatchBuiltin(ctx, freed)
	workers, err := d.Q.EnabledWorkers(ctx)
	if err != nil {
		if ctx.Err() == nil {
			d.Log.Warn("queues: cannot read the workers", "err", err)
		}
		return
	}
	for _, w := range workers {
		if d.isBuiltin(w.Queue) {
			continue // a built-in queue's jobs are its handler's
		}
		d.mu.Lock()
		free := w.Concurrency - d.busy[w.ID]
		d.mu.Unlock()
		if free <= 0 {
			continue
		}
		jobs, err := d.Q.Claim(ctx, w.ID, w.Queue, free, d.Node)
		if err != nil {
			if ctx.Err() == nil {
				d.Log.Warn("queues: claim failed", "queue", w.Queue, "err", err)
			}
			continue
		}
		for _, j := range jobs {
			code := Code{Kind: "worker", ID: w.ID, Source: w.Code}
			d.start(ctx, w.ID, j, freed, func(ctx context.Context) (any, bool, error) {
				vars := map[string]any{"payload": decodePayload(j.Payload), "attempt": j.Attempt, "queue": j.Queue, "jobId": j.ID}
				return runUntil(ctx, d.Code, j.Until, code, vars)
			})
		}
	}
}

// start counts j against key's concurrency and runs it in its own
// goroutine.
func (d *Dispatcher) start(ctx context.Context, key string, j Claimed, freed chan struct{}, exec func(context.Context) (any, bool, error)) {
	d.mu.Lock()
	d.busy[key]++
	d.mu.Unlock()
	d.runs.Add(1)
	go d.run(ctx, key, j, freed, exec)
}

// run runs one claimed job with exec and completes it.
func (d *Dispatcher) run(ctx context.Context, key string, j Claimed, freed chan struct{}, exec func(context.Context) (any, bool, error)) {
	defer func() {
		d.mu.Lock()
		d.busy[key]--
		d.mu.Unlock()
		select {
		case freed <- struct{}{}:
		default:
		}
		d.runs.Done()
	}()
	res, interrupted, err := exec(ctx)
	if interrupted {
		d.Log.Info("queues: run interrupted (leadership ended); its claim will expire", "queue", j.Queue, "job", j.ID, "attempt", j.Attempt)
		return
	}
	if err != nil {
		d.Log.Info("queues: run failed", "queue", j.Queue, "job", j.ID, "attempt", j.Attempt, "err", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if cerr := d.Q.Complete(sctx, j.ID, j.Attempt, res, err); cerr != nil {
		d.Log.Warn("queues: completion not recorded; the claim will expire", "queue", j.Queue, "job", j.ID, "attempt", j.Attempt, "err", cerr)
	}
}
