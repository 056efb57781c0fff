package main

import (
	"strings"
	"testing"
	"time"

	"svcd/cluster"
)

// TestRaftTimingEnv: the SVC_RAFT_*_TIMEOUT variables are Go durations
// checked together; unset ones take the defaults, and a combination Raft
// refuses is an error naming the variables.
func TestRaftTimingEnv(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		heartbeat, elect, lease string
		want                    cluster.Timing
		wantErr                 string
	}{
		{name: "unset", want: cluster.Timing{}},
		{name: "all set", heartbeat: "2s", elect: "3s", lease: "1500ms",
			want: cluster.Timing{HeartbeatTimeout: 2 * time.Second, ElectionTimeout: 3 * time.Second, LeaderLeaseTimeout: 1500 * time.Millisecond}},
		{name: "heartbeat alone", heartbeat: " 4s ", want: cluster.Timing{HeartbeatTimeout: 4 * time.Second}},
		{name: "not a duration", heartbeat: "500", wantErr: "SVC_RAFT_HEARTBEAT_TIMEOUT: want a positive Go duration"},
		{name: "negative", elect: "-1s", wantErr: "SVC_RAFT_ELECTION_TIMEOUT: want a positive Go duration"},
		{name: "zero", lease: "0s", wantErr: "SVC_RAFT_LEADER_LEASE_TIMEOUT: want a positive Go duration"},
		{name: "lease over heartbeat", heartbeat: "300ms", lease: "400ms",
			wantErr: "leader lease timeout 400ms is longer than the heartbeat timeout 300ms"},
		{name: "lease over the default heartbeat", lease: "1h", wantErr: "SVC_RAFT_LEADER_LEASE_TIMEOUT=1h0m0s"},
		{name: "election under heartbeat", heartbeat: "2s", elect: "1s",
			wantErr: "election timeout 1s is shorter than the heartbeat timeout 2s"},
		{name: "too small", heartbeat: "5ms", elect: "5ms", lease: "5ms", wantErr: "heartbeat timeout 5ms is below the minimum 10ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envHeartbeatTimeout, tc.heartbeat)
			t.Setenv(envElectionTimeout, tc.elect)
			t.Setenv(envLeaderLeaseTimeout, tc.lease)
			got, err := raftTimingEnv()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("raftTimingEnv() = %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("raftTimingEnv() = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestServeFlagsRaftTiming: parseServeFlags refuses bad timing before
// anything starts, and passes good timing to the stack.
func TestServeFlagsRaftTiming(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SVC_CLUSTER_KEY", "k")
	t.Setenv(envHeartbeatTimeout, "800ms")
	t.Setenv(envLeaderLeaseTimeout, "900ms")
	if _, err := parseServeFlags([]string{"--dir", dir, "--raft-addr", "127.0.0.1:0", "--bootstrap"}); err == nil ||
		!strings.Contains(err.Error(), "leader lease timeout 900ms is longer than the heartbeat timeout 800ms") {
		t.Fatalf("parseServeFlags with lease > heartbeat: %v, want the timing error", err)
	}
	t.Setenv(envLeaderLeaseTimeout, "600ms")
	c, err := parseServeFlags([]string{"--dir", dir, "--raft-addr", "127.0.0.1:0", "--bootstrap"})
	if err != nil {
		t.Fatal(err)
	}
	want := cluster.Timing{HeartbeatTimeout: 800 * time.Millisecond, LeaderLeaseTimeout: 600 * time.Millisecond}
	if got := c.stackConfig().RaftTiming; got != want {
		t.Errorf("stack RaftTiming = %+v, want %+v", got, want)
	}
}
