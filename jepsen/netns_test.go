package jepsen_test

import (
	"os"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// TestNetnsPartitionLeader: a cluster in network namespaces; isolating
// the leader makes the other two elect a new one, and healing brings the
// old leader back as a follower that converges.
func TestNetnsPartitionLeader(t *testing.T) {
	skipShort(t)
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if err := harness.NetworkSupported(); err != nil {
		t.Fatal(err)
	}
	c := harness.StartCluster(t, 3, harness.ClusterOptions{Netns: true})
	old := c.MustLeader(t, leaderTimeout)
	var others []string
	for _, nd := range c.Nodes() {
		if nd != old {
			others = append(others, nd.Name)
		}
	}
	if err := c.Network().Partition([]string{old.Name}, others); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	deadline := time.Now().Add(leaderTimeout)
	for {
		s, err := c.Summary(t.Context(), c.Node(others[0]))
		if err == nil && s.LeaderID != "" && s.LeaderID != old.Name && s.State != "Candidate" {
			t.Logf("new leader %s after %s", s.LeaderID, time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new leader on the majority side: %+v %v", s, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.Network().Heal(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Converge(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}
