package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine/migrations"
)

// bootSnapshotTimeout bounds the wait for a leader and the apply of
// --apply-snapshot.
const bootSnapshotTimeout = 2 * time.Minute

// readBootSnapshot reads and checks the file of --apply-snapshot before
// the node opens anything: a file that is not a snapshot this binary can
// apply stops start-up here. nil without the flag.
func readBootSnapshot(cfg *config) (*migrations.Snapshot, migrations.Mode, error) {
	if cfg.applySnapshot == "" {
		return nil, "", nil
	}
	mode, err := migrations.ParseMode(cfg.snapshotMode)
	if err != nil {
		return nil, "", fmt.Errorf("--snapshot-mode: %w", err)
	}
	b, err := os.ReadFile(cfg.applySnapshot)
	if err != nil {
		return nil, "", fmt.Errorf("--apply-snapshot: %w", err)
	}
	snap, err := migrations.Decode(b)
	if err != nil {
		return nil, "", fmt.Errorf("--apply-snapshot %s: %s", cfg.applySnapshot, describe(err))
	}
	return snap, mode, nil
}

// applyBootSnapshot applies snap through the log once the node is ready
// (it has a leader and its internal migrations are done); on a follower
// the command is forwarded like any write. A snapshot the schema refuses
// is an error: the caller stops the node.
func applyBootSnapshot(st *stack.Stack, snap *migrations.Snapshot, mode migrations.Mode, path string, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), bootSnapshotTimeout)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		return fmt.Errorf("--apply-snapshot %s: the node did not become ready: %w", path, err)
	}
	d, idx, err := st.Migrations.Apply(ctx, snap, mode)
	if err != nil {
		return fmt.Errorf("--apply-snapshot %s: %s", path, describe(err))
	}
	log.Info("schema snapshot applied", "file", path, "mode", string(mode), "changes", d.Applies, "data_loss", d.DataLoss, "index", idx)
	return nil
}
