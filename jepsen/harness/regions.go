package harness

import (
	"errors"
	"fmt"
	"time"
)

// Regions places the nodes of a namespaced Network in regions with fixed
// round trips between them: one node per region, and every TCP link
// between two nodes (Raft, forwarding and status RPCs on the Raft port,
// gossip's TCP streams) slowed through a DelayProxy so that a request and
// its answer over it take RTT(a, b). Gossip's UDP probes are not delayed,
// and neither is anything between the test process and a node (the test
// stands beside every node: its clients reach each one over the bridge
// with no added delay).
//
// A DelayProxy holds each chunk for its delay in both directions of the
// connection it relays, and Network.Delay(from, to) redirects only the
// connections from dials to `to`; so each pair gets two proxies, one per
// dialing side, each of RTT/2: whichever node dials, a round trip over
// the link costs RTT.
type Regions struct {
	// Nodes are the node names, one per region, in region order.
	Nodes []string
	// Names are the regions' labels, parallel to Nodes.
	Names []string
	// RTTs[i][j] is the round trip between Nodes[i] and Nodes[j]
	// (symmetric; the diagonal is unused). Without RTTs the regions
	// describe the undelayed network: every RTT is 0.
	RTTs [][]time.Duration
}

// ThreeRegions is three regions A, B and C on nodes n1, n2 and n3 with
// the given round trips between A and B, B and C, A and C.
func ThreeRegions(ab, bc, ac time.Duration) Regions {
	return Regions{
		Nodes: []string{"n1", "n2", "n3"},
		Names: []string{"A", "B", "C"},
		RTTs: [][]time.Duration{
			{0, ab, ac},
			{ab, 0, bc},
			{ac, bc, 0},
		},
	}
}

// Index is node's position in Nodes (-1 when it is in no region).
func (r Regions) Index(node string) int {
	for i, n := range r.Nodes {
		if n == node {
			return i
		}
	}
	return -1
}

// RTT is the round trip between nodes a and b (0 for the same node or an
// unknown one).
func (r Regions) RTT(a, b string) time.Duration {
	i, j := r.Index(a), r.Index(b)
	if i < 0 || j < 0 || i == j || i >= len(r.RTTs) || j >= len(r.RTTs[i]) {
		return 0
	}
	return r.RTTs[i][j]
}

// Nearest is the smallest round trip from node to any other node of the
// regions.
func (r Regions) Nearest(node string) time.Duration {
	var best time.Duration
	for _, other := range r.Nodes {
		if other == node {
			continue
		}
		if d := r.RTT(node, other); best == 0 || d < best {
			best = d
		}
	}
	return best
}

// Apply delays every link between two nodes of the regions on nw, both
// dialing directions, by half the pair's round trip each way. Existing
// connections between them are reset (Network.Delay), so their owners
// re-dial through the proxies.
func (r Regions) Apply(nw *Network) error {
	if len(r.Names) != len(r.Nodes) || len(r.RTTs) != len(r.Nodes) {
		return errors.New("regions: Nodes, Names and RTTs differ in length")
	}
	for i, a := range r.Nodes {
		for j, b := range r.Nodes {
			if i == j {
				continue
			}
			if r.RTTs[i][j] != r.RTTs[j][i] {
				return fmt.Errorf("regions: RTT %s-%s is not symmetric", a, b)
			}
			if err := nw.Delay(a, b, r.RTTs[i][j]/2); err != nil {
				return fmt.Errorf("regions: delay %s->%s: %w", a, b, err)
			}
		}
	}
	return nil
}
