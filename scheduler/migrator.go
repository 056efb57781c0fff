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
// leads, retrying until the replica reports it migrated.
type Migrator struct {
	M   Migrating
	Log *slog.Logger
}

// Name implements Subsystem.
func (m *Migrator) Name() string { return "migrator" }

// SetEnabled implements Subsystem.
func (m *Migrator) SetEnabled(ctx context.Context, enabled bool) {
	if !enabled {
		return
	}
	go func() {
		backoff := 50 * time.Millisecond
		for !m.M.Migrated() {
			if err := m.M.Migrate(ctx); err != nil {
				m.Log.Warn("internal schema migration failed; retrying", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 2*time.Second)
		}
	}()
}
