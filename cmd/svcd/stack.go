package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"svcd/cluster"
	"svcd/engine"
	"svcd/engine/token"
	"svcd/fsm"
	"svcd/scheduler"
)

// stack is one node's state machine, domain and consensus, wired together.
type stack struct {
	cfg    *config
	log    *slog.Logger
	store  *fsm.Store
	engine *engine.Engine
	node   *cluster.Node
	cancel context.CancelFunc
	done   chan struct{}
}

// openStack opens the database, registers the engine's handlers, starts
// Raft (replaying the log into the state machine) and the leader loop.
func openStack(cfg *config, log *slog.Logger) (*stack, error) {
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	id, err := nodeID(cfg.dataDir, cfg.nodeID)
	if err != nil {
		return nil, fmt.Errorf("node id: %w", err)
	}
	key, err := signingKey(cfg.dataDir, cfg.jwtSecret, log)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	signer, err := token.NewSigner(key)
	if err != nil {
		return nil, err
	}
	store, err := fsm.Open(fsm.Options{
		Path:     filepath.Join(cfg.dataDir, "data.db"),
		Registry: fsm.NewRegistry(),
		Logger:   log,
		OnFatal: func(err error) {
			log.Error("FATAL: the state machine cannot continue; stopping the node", "err", err)
			os.Exit(70)
		},
	})
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(engine.Options{Store: store, Signer: signer, Logger: log})
	if err != nil {
		store.Close()
		return nil, err
	}
	node, err := cluster.Open(cluster.Config{
		NodeID:            id,
		Dir:               filepath.Join(cfg.dataDir, "raft"),
		RaftAddr:          cfg.raftAddr,
		Bootstrap:         cfg.bootstrap,
		SnapshotThreshold: cfg.snapshotThreshold,
		SnapshotInterval:  cfg.snapshotInterval,
		TrailingLogs:      cfg.trailingLogs,
		Logger:            log,
	}, store)
	if err != nil {
		store.Close()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (is another svcd running on %s?)", err, cfg.dataDir)
		}
		return nil, err
	}
	eng.SetProposer(node)
	ctx, cancel := context.WithCancel(context.Background())
	s := &stack{cfg: cfg, log: log, store: store, engine: eng, node: node, cancel: cancel, done: make(chan struct{})}
	loop := scheduler.NewLoop(node, log, 0, &scheduler.Migrator{M: eng, Log: log})
	go func() { loop.Run(ctx); close(s.done) }()
	return s, nil
}

// waitReady waits until the node has a leader, has caught up and is
// migrated.
func (s *stack) waitReady(ctx context.Context) error {
	if err := s.node.WaitReady(ctx); err != nil {
		return err
	}
	for !s.engine.Migrated() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// close stops leader work, then Raft (handing leadership over if this node
// leads others), then the database.
func (s *stack) close() error {
	s.cancel()
	<-s.done
	return errors.Join(s.node.Shutdown(), s.store.Close())
}

// stats is the admin metrics snapshot.
func (s *stack) stats() map[string]any {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	bs := s.store.BatchStats()
	st := s.node.Stats()
	return map[string]any{
		"process_cpu_seconds":    cpu,
		"fsm_batches_total":      bs.Batches,
		"fsm_commands_total":     bs.Commands,
		"fsm_batch_commands_p50": bs.P50,
		"fsm_batch_commands_p99": bs.P99,
		"fsm_applied_index":      s.store.AppliedIndex(),
		"raft_commit_index":      st.CommitIndex,
		"raft_applied_index":     st.AppliedIndex,
		"raft_last_index":        st.LastIndex,
		"raft_term":              st.Term,
		"raft_state":             s.node.State(),
	}
}
