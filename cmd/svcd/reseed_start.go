package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"svcd/cluster"
	"svcd/cmd/svcd/stack"
)

// resumeReseed finishes `svcd repair reseed` at the start that follows it
// (cluster/reseed.go): while the node holds no Raft state, it asks the
// cluster to remove it and add it back (a reseed join) before Raft starts,
// through --join and then the URLs the repair recorded, and never
// bootstraps. It
// reports whether it joined. Once the node holds Raft state again, it
// removes the marker.
func resumeReseed(cfg *config, log *slog.Logger) (joined bool, err error) {
	raftDir := filepath.Join(cfg.dataDir, "raft")
	m, err := cluster.ReadReseed(raftDir)
	if err != nil || m == nil {
		return false, err
	}
	has, err := cluster.HasState(raftDir)
	if err != nil && !errors.Is(err, cluster.ErrDamaged) {
		return false, err
	}
	if has {
		log.Info("the reseeded node holds Raft state again; removing the reseed marker", "since", m.At)
		return false, cluster.ClearReseed(raftDir)
	}
	if err != nil {
		return false, err // damage found: the start reports it with its repair
	}
	if cfg.raftAddr == "" {
		return false, errors.New("serve: this node was reseeded (svcd repair reseed) and must rejoin its cluster: " +
			"start it with --raft-addr and --join")
	}
	// The repair's URLs are tried after --join: the members a node was
	// first started with may have been retired since, and the operator
	// who reseeds it names ones that run now.
	cfg.join = joinList(cfg.join, m.Join)
	if cfg.join == "" {
		return false, errors.New("serve: this node was reseeded (svcd repair reseed) and must rejoin its cluster: " +
			"start it with --join URL of a running member")
	}
	id, err := stack.NodeID(cfg.dataDir, cfg.nodeID)
	if err != nil {
		return false, err
	}
	if m.NodeID != "" && m.NodeID != id {
		return false, fmt.Errorf("serve: this node was reseeded as %s but starts as %s: start it with --node-id %s", m.NodeID, id, m.NodeID)
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return false, err
	}
	cfg.bootstrap, cfg.reseed = false, true
	log.Info("rejoining the cluster after a reseed: asking to be removed and added back", "node_id", id, "via", cfg.join)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := joinCluster(ctx, cfg, id, log); err != nil {
		return false, err
	}
	return true, nil
}

// joinList is the comma-separated union of flag and more, in that order,
// each URL once.
func joinList(flag string, more []string) string {
	var out []string
	seen := map[string]bool{}
	for _, u := range append(strings.Split(flag, ","), more...) {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return strings.Join(out, ",")
}

// reseedPending reports whether dataDir carries a reseed marker: the
// start then rejoins (resumeReseed), and says what it misses to.
func reseedPending(dataDir string) bool {
	m, err := cluster.ReadReseed(filepath.Join(dataDir, "raft"))
	return err == nil && m != nil
}
