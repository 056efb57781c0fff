package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// Migrating is the engine's internal-schema migration.
type Migrating interface {
	Migrated() bool
	Migrate(ctx context.Context) error
}

// Migrator proposes the binary's internal schema version while this node
// leads, retrying until the replica reports it migrated, and again
// whenever the replica falls behind while it leads (a restore of an older
// backup that its command could not migrate).
type Migrator struct {
	M   Migrating
	Log *slog.Logger
	// Watch is how often a migrated replica is looked at again (0: 1 s).
	Watch time.Duration
}

// Name implements Subsystem.
func (m *Migrator) Name() string { return "migrator" }

// SetEnabled implements Subsystem.
func (m *Migrator) SetEnabled(ctx context.Context, enabled bool) {
	if !enabled {
		return
	}
	watch := m.Watch
	if watch <= 0 {
		watch = time.Second
	}
	go func() {
		backoff := 50 * time.Millisecond
		for {
			wait := watch
			if !m.M.Migrated() {
				if err := m.M.Migrate(ctx); err != nil {
					m.Log.Warn("internal schema migration failed; retrying", "err", err)
				}
				wait = backoff
				backoff = min(backoff*2, 2*time.Second)
			} else {
				backoff = 50 * time.Millisecond
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}()
}
