package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"svcd/cluster"
)

// Raft timing variables (Go durations; unset: cluster's defaults). They act
// only with --raft-addr: single-node mode keeps its own short timeouts.
const (
	envHeartbeatTimeout   = "SVC_RAFT_HEARTBEAT_TIMEOUT"
	envElectionTimeout    = "SVC_RAFT_ELECTION_TIMEOUT"
	envLeaderLeaseTimeout = "SVC_RAFT_LEADER_LEASE_TIMEOUT"
)

// raftTimingEnv reads SVC_RAFT_HEARTBEAT_TIMEOUT, SVC_RAFT_ELECTION_TIMEOUT
// and SVC_RAFT_LEADER_LEASE_TIMEOUT and checks them together (with the
// defaults of those unset), so a combination Raft would refuse stops the
// start with the variables' names.
func raftTimingEnv() (cluster.Timing, error) {
	var t cluster.Timing
	for _, v := range []struct {
		key string
		dst *time.Duration
	}{
		{envHeartbeatTimeout, &t.HeartbeatTimeout},
		{envElectionTimeout, &t.ElectionTimeout},
		{envLeaderLeaseTimeout, &t.LeaderLeaseTimeout},
	} {
		s := strings.TrimSpace(os.Getenv(v.key))
		if s == "" {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return cluster.Timing{}, fmt.Errorf("%s: want a positive Go duration such as 1s or 500ms, got %q", v.key, s)
		}
		*v.dst = d
	}
	if err := t.Validate(); err != nil {
		eff := t.WithDefaults()
		return cluster.Timing{}, fmt.Errorf("serve: raft timing: %w (%s=%s, %s=%s, %s=%s, unset ones at their defaults)", err,
			envHeartbeatTimeout, eff.HeartbeatTimeout, envElectionTimeout, eff.ElectionTimeout, envLeaderLeaseTimeout, eff.LeaderLeaseTimeout)
	}
	return t, nil
}
