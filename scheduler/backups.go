package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// BackupJob is the engine's scheduled backups (engine/backup): when the
// next one is due, and writing one.
type BackupJob interface {
	// NextBackup is when the next scheduled backup is due; false while
	// none is scheduled. With no run recorded the schedule counts from
	// since.
	NextBackup(ctx context.Context, since time.Time) (time.Time, bool, error)
	// RunScheduledBackup writes one now and records it.
	RunScheduledBackup(ctx context.Context) error
}

// Backups runs the scheduled backups while this node leads. The schedule
// and its destination are settings: they are read again at every step,
// so a change applies within Poll. Each run is recorded through the log
// by the job itself, so a new leader resumes from the last run.
type Backups struct {
	Job BackupJob
	Log *slog.Logger
	// Poll is the longest wait between two looks at the settings (0: 5 s).
	Poll time.Duration
	// Retry is the least wait after a run that failed (0: 30 s).
	Retry time.Duration
}

// NewBackups returns the subsystem of job.
func NewBackups(job BackupJob, log *slog.Logger) *Backups {
	return &Backups{Job: job, Log: log}
}

// Name implements Subsystem.
func (b *Backups) Name() string { return "backups" }

// SetEnabled implements Subsystem: the loop runs until leadership ends.
func (b *Backups) SetEnabled(ctx context.Context, enabled bool) {
	if enabled {
		go b.run(ctx, time.Now())
	}
}

func (b *Backups) run(ctx context.Context, since time.Time) {
	poll, retry := b.Poll, b.Retry
	if poll <= 0 {
		poll = 5 * time.Second
	}
	if retry <= 0 {
		retry = 30 * time.Second
	}
	var lastErr string
	for {
		wait := poll
		next, ok, err := b.Job.NextBackup(ctx, since)
		switch {
		case err != nil:
			if err.Error() != lastErr {
				b.Log.Warn("scheduled backups: cannot read the schedule", "err", err)
				lastErr = err.Error()
			}
		case ok && !time.Now().Before(next):
			lastErr = ""
			if err := b.Job.RunScheduledBackup(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				// Logged and recorded by the job; the next time of the
				// schedule comes after the recorded run, but a run that
				// could not be recorded must not be tried in a loop.
				wait = retry
				break
			}
			continue
		case ok:
			lastErr = ""
			wait = min(wait, time.Until(next))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
