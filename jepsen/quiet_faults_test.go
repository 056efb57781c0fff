package jepsen_test

import (
	"testing"
	"time"

	"svcd/jepsen/suite"
)

// TestJepsenNoSpuriousElections: faults that leave the leader running and
// reachable (latency of 50-250 ms each way between two nodes, a follower
// SIGSTOPped for seconds) must not start an election: with Raft's default
// timing (cluster/timing.go) the run ends in the term it began with and
// under the same leader. JEPSEN=full (`make jepsen`) runs it for
// JEPSEN_TIME/5, with the full run's fault lengths; JEPSEN=smoke skips it.
func TestJepsenNoSpuriousElections(t *testing.T) {
	if jepsenMode(t) != "full" {
		t.Skip("spurious elections: JEPSEN=full only")
	}
	total := envDuration(t, "JEPSEN_TIME", 5*time.Minute)
	opts := baseOptions(t)
	opts.Duration = total / 5
	slot := total / 4 / time.Duration(len(allFaults())) // as in TestJepsen
	opts.FaultMin = 2 * time.Second
	opts.FaultMax = min(max(slot-2*time.Second, 3*time.Second), 10*time.Second)
	opts.PauseMin = 2 * time.Second
	opts.PauseMax = min(max(2*slot, 5*time.Second), 30*time.Second)
	rep := run(t, suite.NewLocal(), []suite.Fault{suite.Latency{}, suite.Pause{}}, opts)
	if rep.Elections != 0 || rep.LeaderChanges != 0 {
		t.Errorf("latency and follower pauses caused %d election(s) and %d leader change(s) (seed %d): the heartbeat timeout is too short for them",
			rep.Elections, rep.LeaderChanges, rep.Seed)
	}
}
