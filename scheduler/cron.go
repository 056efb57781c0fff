package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// CronRun is an inline run of a scheduled job the firer executes: the
// job's code with scheduledAt (unix seconds) and jobId in its ctx.
type CronRun struct {
	JobID       string
	Key         string
	Code        string
	ScheduledAt int64
	Manual      bool
	Until       time.Time
}

// CronWork is the scheduled jobs as the firer drives them: FireDue
// commits a firing for each due scheduled time (once per job and time,
// whichever leader proposes it; missed ones skipped unless the job asks
// for catch-up), enqueues the worker-mode ones, starts pending run-nows,
// and answers the inline runs to execute; FinishRun records their end.
type CronWork interface {
	FireDue(ctx context.Context, by string) ([]CronRun, error)
	FinishRun(ctx context.Context, run CronRun, result any, runErr error) error
}

// maxInlineRuns bounds the inline runs executing at once.
const maxInlineRuns = 16

// Firer fires scheduled jobs while this node leads. An inline run is at
// most once: its firing is committed before it runs, and a leader that
// dies mid-run leaves it running until the reaper marks it lost; no
// leader runs it again.
type Firer struct {
	C    CronWork
	Code CodeRunner
	Node string
	Log  *slog.Logger
	// Tick is how often due jobs are looked for (0: 250 ms: schedules
	// with seconds fire within a quarter of a second).
	Tick time.Duration

	done chan struct{}
	runs sync.WaitGroup
}

// Name implements Subsystem.
func (f *Firer) Name() string { return "job firer" }

// SetEnabled implements Subsystem; disabling waits for the loop and its
// runs.
func (f *Firer) SetEnabled(ctx context.Context, enabled bool) {
	if !enabled {
		if f.done != nil {
			<-f.done
			f.runs.Wait()
			f.done = nil
		}
		return
	}
	f.done = make(chan struct{})
	go f.loop(ctx, f.done)
}

func (f *Firer) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := f.Tick
	if tick <= 0 {
		tick = 250 * time.Millisecond
	}
	sem := make(chan struct{}, maxInlineRuns)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		runs, err := f.C.FireDue(ctx, f.Node)
		if err != nil && ctx.Err() == nil {
			f.Log.Warn("jobs: firing failed", "err", err)
		}
		for _, r := range runs {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				// Committed but not run: the reaper marks it lost.
				continue
			}
			f.runs.Add(1)
			go func(r CronRun) {
				defer func() { <-sem; f.runs.Done() }()
				f.run(ctx, r)
			}(r)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (f *Firer) run(ctx context.Context, r CronRun) {
	vars := map[string]any{"scheduledAt": r.ScheduledAt, "jobId": r.JobID}
	res, interrupted, err := runUntil(ctx, f.Code, r.Until, Code{Kind: "job", ID: r.JobID, Source: r.Code}, vars)
	if interrupted {
		f.Log.Info("jobs: run interrupted (leadership ended); it is not run again", "job", r.JobID, "key", r.Key)
		return
	}
	if err != nil {
		f.Log.Info("jobs: run failed", "job", r.JobID, "key", r.Key, "err", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if ferr := f.C.FinishRun(sctx, r, res, err); ferr != nil {
		f.Log.Warn("jobs: the end of a run was not recorded", "job", r.JobID, "key", r.Key, "err", ferr)
	}
}
