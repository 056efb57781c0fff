package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// RetentionJob is the engine's retention (engine/prune.go): how often to
// prune, and pruning once (through the log, in bounded commands) with
// its audit entry.
type RetentionJob interface {
	// RetentionInterval is retention.interval_seconds.
	RetentionInterval() time.Duration
	// RunRetention prunes what is past its retention now.
	RunRetention(ctx context.Context) error
}

// Retention runs the pruner while this node leads: once when it becomes
// leader (after First), then every interval, read again after each run.
type Retention struct {
	Job RetentionJob
	Log *slog.Logger
	// First is the wait before the first run after leadership begins
	// (0: one minute), so a fresh leader first settles.
	First time.Duration
}

// Name implements Subsystem.
func (r *Retention) Name() string { return "retention" }

// SetEnabled implements Subsystem: the loop runs until leadership ends.
func (r *Retention) SetEnabled(ctx context.Context, enabled bool) {
	if enabled {
		go r.run(ctx)
	}
}

func (r *Retention) run(ctx context.Context) {
	wait := r.First
	if wait <= 0 {
		wait = time.Minute
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err := r.Job.RunRetention(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("retention: pruning failed", "err", err)
		}
		wait = r.Job.RetentionInterval()
	}
}
