package scheduler

import (
	"context"
	"errors"
)

// JobHandler runs the jobs of a built-in queue in Go: a module's own work
// (engine/notify's push sends) that wants the queue's claims, retries with
// backoff, dead letters and reaper, but no JavaScript. ctx ends at the end
// of the job's claim (queues.visibility_timeout_sec) or when leadership
// does. A nil error completes the job with result; an error fails the
// attempt (queued again after its backoff while retries remain, else
// dead).
type JobHandler interface {
	HandleJob(ctx context.Context, job Claimed) (result any, err error)
}

// BuiltinQueue is a queue whose jobs the dispatcher hands to Handler, at
// most Concurrency at a time (counted from the database, as a worker's).
// A JavaScript worker saved for the same queue is ignored (engine/queue
// refuses to save one).
type BuiltinQueue struct {
	Queue       string
	Concurrency int
	Handler     JobHandler
}

// builtinKey is the key of a built-in queue in the dispatcher's busy map
// (worker ids start with "wrk_", so the two never meet).
func builtinKey(queue string) string { return "builtin:" + queue }

// dispatchBuiltin claims and starts what each built-in queue has room
// for.
func (d *Dispatcher) dispatchBuiltin(ctx context.Context, freed chan struct{}) {
	for _, b := range d.Builtin {
		key := builtinKey(b.Queue)
		d.mu.Lock()
		free := b.Concurrency - d.busy[key]
		d.mu.Unlock()
		if free <= 0 {
			continue
		}
		jobs, err := d.Q.ClaimBuiltin(ctx, b.Queue, b.Concurrency, free, d.Node)
		if err != nil {
			if ctx.Err() == nil {
				d.Log.Warn("queues: claim failed", "queue", b.Queue, "err", err)
			}
			continue
		}
		for _, j := range jobs {
			d.start(ctx, key, j, freed, func(ctx context.Context) (any, bool, error) {
				return runHandler(ctx, b.Handler, j)
			})
		}
	}
}

// runHandler runs h on j until j's claim ends, as runUntil runs code.
func runHandler(ctx context.Context, h JobHandler, j Claimed) (res any, interrupted bool, err error) {
	rctx := ctx
	if !j.Until.IsZero() {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(ctx, j.Until)
		defer cancel()
	}
	res, err = h.HandleJob(rctx, j)
	if err != nil && ctx.Err() != nil {
		return nil, true, err
	}
	if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		err = errClaimEnded
	}
	return res, false, err
}

// isBuiltin reports whether queue is one of d's built-in queues.
func (d *Dispatcher) isBuiltin(queue string) bool {
	for _, b := range d.Builtin {
		if b.Queue == queue {
			return true
		}
	}
	return false
}
