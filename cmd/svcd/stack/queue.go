package stack

import (
	"context"
	"log/slog"
	"time"

	"svcd/engine/jsvm"
	"svcd/engine/queue"
	"svcd/scheduler"
)

// The queue module as the leader's loops drive it (scheduler declares
// what it needs; the module's types stay the module's).

// queueWork adapts engine/queue to scheduler.QueueWork and scheduler.Reaping.
type queueWork struct {
	q *queue.Queue
	// now is the engine's clock: a claim's end is on it, a run's deadline
	// on the real one.
	now func() time.Time
}

// realDeadline is the real time at which engine time end (unix ms)
// comes.
func realDeadline(now func() time.Time, end int64) time.Time {
	return time.Now().Add(time.UnixMilli(end).Sub(now()))
}

func (w queueWork) EnabledWorkers(ctx context.Context) ([]scheduler.Worker, error) {
	all, err := w.q.EnabledWorkers(ctx)
	out := make([]scheduler.Worker, 0, len(all))
	for _, wk := range all {
		out = append(out, scheduler.Worker{ID: wk.ID, Queue: wk.Queue, Code: wk.Code, Concurrency: int(wk.Concurrency)})
	}
	return out, err
}

func (w queueWork) Claim(ctx context.Context, workerID, queueName string, max int, by string) ([]scheduler.Claimed, error) {
	jobs, err := w.q.Claim(ctx, workerID, queueName, max, by)
	return w.claimed(jobs), err
}

func (w queueWork) ClaimBuiltin(ctx context.Context, queueName string, concurrency, max int, by string) ([]scheduler.Claimed, error) {
	jobs, err := w.q.ClaimBuiltin(ctx, queueName, concurrency, max, by)
	return w.claimed(jobs), err
}

// claimed are claimed jobs as the dispatcher sees them.
func (w queueWork) claimed(jobs []queue.ClaimedJob) []scheduler.Claimed {
	out := make([]scheduler.Claimed, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, scheduler.Claimed{ID: j.ID, Queue: j.Queue, Attempt: j.Attempt, Payload: j.Payload, Until: realDeadline(w.now, j.Until)})
	}
	return out
}

func (w queueWork) Complete(ctx context.Context, id string, attempt int64, result any, runErr error) error {
	return w.q.Complete(ctx, id, attempt, result, runErr)
}

func (w queueWork) Wake() <-chan struct{} { return w.q.Wake() }

func (w queueWork) Reap(ctx context.Context) (bool, error) { return w.q.Reap(ctx) }

// cronWork adapts engine/queue's scheduled jobs to scheduler.CronWork.
type cronWork struct {
	q   *queue.Queue
	now func() time.Time
}

func (c cronWork) FireDue(ctx context.Context, by string) ([]scheduler.CronRun, error) {
	runs, err := c.q.FireDue(ctx, by)
	out := make([]scheduler.CronRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, scheduler.CronRun{JobID: r.JobID, Key: r.Key, Code: r.Code, ScheduledAt: r.ScheduledAt, Manual: r.Manual, Until: realDeadline(c.now, r.UntilMs)})
	}
	return out, err
}

func (c cronWork) FinishRun(ctx context.Context, r scheduler.CronRun, result any, runErr error) error {
	return c.q.FinishRun(ctx, queue.InlineRun{JobID: r.JobID, Key: r.Key}, result, runErr)
}

// jsRunner runs the code of jobs and workers through the JavaScript
// module: the context members the loops pass plus the helpers every kind
// of code gets, as the system, under execution.timeout_ms; what the code
// writes is attributed to its job or worker (history's via, the audit).
type jsRunner struct{ js *jsvm.Module }

func (r jsRunner) RunJob(ctx context.Context, code scheduler.Code, vars map[string]any) (any, error) {
	return r.js.Run(ctx, jsvm.Call{Kind: code.Kind, ID: code.ID, Code: code.Source, Vars: vars})
}

// enqueuer is engine/queue as helpers.enqueue reaches it.
type enqueuer struct{ q *queue.Queue }

func (e enqueuer) Enqueue(ctx context.Context, name string, payload any, o jsvm.EnqueueOptions) (string, bool, error) {
	return e.q.Enqueue(ctx, name, payload, queue.EnqueueOptions(o))
}

// queueSubsystems are the queue module's leader-only loops: the job
// firer, the queue dispatcher (with the push providers' built-in queues)
// and the reaper, for node.
func (d *Domain) queueSubsystems(node string, log *slog.Logger) []scheduler.Subsystem {
	run := jsRunner{d.Scripts}
	return []scheduler.Subsystem{
		&scheduler.Firer{C: cronWork{d.Queue, d.Engine.Now}, Code: run, Node: node, Log: log},
		&scheduler.Dispatcher{Q: queueWork{d.Queue, d.Engine.Now}, Code: run, Builtin: d.pushQueues(), Node: node, Log: log},
		&scheduler.Reaper{R: queueWork{d.Queue, d.Engine.Now}, Log: log},
	}
}
