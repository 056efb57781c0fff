package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestTimingDefaults: zero fields take the defaults, kept consistent with
// a heartbeat timeout set alone (election no shorter, lease no longer).
func TestTimingDefaults(t *testing.T) {
	if got := (Timing{}).WithDefaults(); got != (Timing{DefaultHeartbeatTimeout, DefaultElectionTimeout, DefaultLeaderLeaseTimeout}) {
		t.Errorf("defaults = %+v", got)
	}
	long := Timing{HeartbeatTimeout: 5 * time.Second}.WithDefaults()
	if long.ElectionTimeout != 5*time.Second || long.LeaderLeaseTimeout != DefaultLeaderLeaseTimeout {
		t.Errorf("heartbeat 5s alone: %+v", long)
	}
	short := Timing{HeartbeatTimeout: 100 * time.Millisecond}.WithDefaults()
	if short.ElectionTimeout != DefaultElectionTimeout || short.LeaderLeaseTimeout != 100*time.Millisecond {
		t.Errorf("heartbeat 100ms alone: %+v", short)
	}
	for _, tm := range []Timing{{}, long, short} {
		if err := tm.Validate(); err != nil {
			t.Errorf("%+v: %v", tm, err)
		}
	}
}

// TestTimingValidate: the checks name the offending timeout, and a timing
// that passes them passes raft's own ValidateConfig too.
func TestTimingValidate(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		t       Timing
		wantErr string
	}{
		{Timing{HeartbeatTimeout: 9 * ms, ElectionTimeout: 20 * ms, LeaderLeaseTimeout: 9 * ms}, "heartbeat timeout 9ms is below the minimum 10ms"},
		{Timing{HeartbeatTimeout: 20 * ms, ElectionTimeout: 20 * ms, LeaderLeaseTimeout: ms}, "leader lease timeout 1ms is below"},
		{Timing{HeartbeatTimeout: 200 * ms, LeaderLeaseTimeout: 300 * ms}, "leader lease timeout 300ms is longer than the heartbeat timeout 200ms"},
		{Timing{HeartbeatTimeout: 2 * time.Second, ElectionTimeout: time.Second}, "election timeout 1s is shorter than the heartbeat timeout 2s"},
		{Timing{HeartbeatTimeout: 10 * ms, ElectionTimeout: 10 * ms, LeaderLeaseTimeout: 10 * ms}, ""},
	} {
		err := tc.t.Validate()
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.t, err)
			}
			rc := raft.DefaultConfig()
			rc.LocalID = "n1"
			if err := tc.t.apply(rc); err != nil {
				t.Errorf("%+v: raft refuses: %v", tc.t, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%+v: %v, want an error containing %q", tc.t, err, tc.wantErr)
		}
	}
}

// TestTimingApplyReportsRaftRefusal: what raft's ValidateConfig refuses
// besides the timing is a clear error too, not a failure inside NewRaft.
func TestTimingApplyReportsRaftRefusal(t *testing.T) {
	rc := raft.DefaultConfig() // no LocalID
	err := (Timing{}).apply(rc)
	if err == nil || !strings.Contains(err.Error(), "cluster: raft configuration: LocalID cannot be empty") {
		t.Fatalf("apply without a LocalID: %v", err)
	}
	rc.LocalID = "n1"
	if err := (Timing{}).apply(rc); err != nil {
		t.Fatal(err)
	}
	if rc.HeartbeatTimeout != DefaultHeartbeatTimeout || rc.ElectionTimeout != DefaultElectionTimeout || rc.LeaderLeaseTimeout != DefaultLeaderLeaseTimeout {
		t.Errorf("applied %s/%s/%s", rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout)
	}
}

// TestOpenRefusesBadTiming: a node with peers refuses a timing raft would
// refuse before it opens its log or binds its address.
func TestOpenRefusesBadTiming(t *testing.T) {
	_, err := Open(Config{NodeID: "n1", Dir: t.TempDir(), RaftAddr: "127.0.0.1:0", ClusterKey: "k",
		Timing: Timing{HeartbeatTimeout: time.Second, LeaderLeaseTimeout: 2 * time.Second}}, nil)
	if err == nil || !strings.Contains(err.Error(), "cluster: raft timing: leader lease timeout 2s is longer than the heartbeat timeout 1s") {
		t.Fatalf("Open with lease > heartbeat: %v", err)
	}
}
