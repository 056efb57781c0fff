package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// Leadership tells whether this node leads.
type Leadership interface {
	IsLeader() bool
}

// Subsystem is leader-only work. SetEnabled(true) is called when this node
// becomes leader and SetEnabled(false) when it stops; the context passed
// with true is cancelled when leadership ends.
type Subsystem interface {
	Name() string
	SetEnabled(ctx context.Context, enabled bool)
}

// Loop watches leadership and drives the subsystems.
type Loop struct {
	lead     Leadership
	subs     []Subsystem
	interval time.Duration
	log      *slog.Logger
}

// NewLoop returns a loop polling leadership every interval.
func NewLoop(lead Leadership, log *slog.Logger, interval time.Duration, subs ...Subsystem) *Loop {
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	return &Loop{lead: lead, subs: subs, interval: interval, log: log}
}

// Run blocks until ctx ends, then disables everything it enabled.
func (l *Loop) Run(ctx context.Context) {
	stop := func() {}
	defer func() { stop() }()
	leading := false
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		now := l.lead.IsLeader()
		if now != leading {
			leading = now
			if leading {
				leaderCtx, cancel := context.WithCancel(ctx)
				stop = cancel
				l.log.Info("leadership acquired; starting leader-only work")
				for _, s := range l.subs {
					s.SetEnabled(leaderCtx, true)
				}
			} else {
				stop()
				l.log.Info("leadership lost; stopping leader-only work")
				for _, s := range l.subs {
					s.SetEnabled(ctx, false)
				}
			}
		}
		select {
		case <-ctx.Done():
			if leading {
				stop()
				for _, s := range l.subs {
					s.SetEnabled(ctx, false)
				}
			}
			return
		case <-t.C:
		}
	}
}
