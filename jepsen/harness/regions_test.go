package harness

import (
	"testing"
	"time"
)

// TestRegionsModel: round trips are looked up both ways, the nearest
// neighbour is the smallest of a node's round trips, and regions without
// RTTs are the undelayed network.
func TestRegionsModel(t *testing.T) {
	ms := time.Millisecond
	r := ThreeRegions(30*ms, 80*ms, 150*ms)
	for _, c := range []struct {
		a, b string
		want time.Duration
	}{
		{"n1", "n2", 30 * ms}, {"n2", "n1", 30 * ms},
		{"n2", "n3", 80 * ms}, {"n3", "n1", 150 * ms},
		{"n1", "n1", 0}, {"n1", "n9", 0},
	} {
		if got := r.RTT(c.a, c.b); got != c.want {
			t.Errorf("RTT(%s, %s) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
	for node, want := range map[string]time.Duration{"n1": 30 * ms, "n2": 30 * ms, "n3": 80 * ms} {
		if got := r.Nearest(node); got != want {
			t.Errorf("Nearest(%s) = %s, want %s", node, got, want)
		}
	}
	flat := Regions{Nodes: r.Nodes, Names: r.Names}
	if got := flat.RTT("n1", "n3") + flat.Nearest("n2"); got != 0 {
		t.Errorf("regions without RTTs: %s, want 0", got)
	}
}
