package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// Reaping is the queue module's reaper: it releases claims past
// queues.visibility_timeout_sec (queued again, or dead without retries),
// marks lost the inline runs whose leader went away, and drops old
// succeeded jobs, proposing only when there is something to do.
type Reaping interface {
	Reap(ctx context.Context) (bool, error)
}

// Reaper calls Reap every Tick while this node leads.
type Reaper struct {
	R   Reaping
	Log *slog.Logger
	// Tick is the time between two passes (0: one second).
	Tick time.Duration
}

// Name implements Subsystem.
func (r *Reaper) Name() string { return "queue reaper" }

// SetEnabled implements Subsystem.
func (r *Reaper) SetEnabled(ctx context.Context, enabled bool) {
	if !enabled {
		return
	}
	tick := r.Tick
	if tick <= 0 {
		tick = time.Second
	}
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := r.R.Reap(ctx); err != nil && ctx.Err() == nil {
				r.Log.Warn("queues: reaper pass failed", "err", err)
			}
		}
	}()
}
