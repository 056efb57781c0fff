package cluster

import (
	"context"
	"time"
)

// A node that starts with no Raft state and does not form a cluster (a new
// member, or a member reseeded by `svcd repair reseed`) has no log to tell
// it how far it must apply before it may answer local reads: its
// readyIndex is 0. Ready at once, it would serve reads from an empty or
// half-restored replica. For a reseeded member that breaks read-your-
// writes: its clients hold acknowledgements of writes far past what it has
// restored (the fault suite caught a reseeded node answering a value from
// its snapshot, 25,000 entries behind a write it had acknowledged before).
//
// Such a node asks the leader for its commit index, which covers every
// write any node has acknowledged, and counts as caught up only once its
// replica has applied that much.

// learnCatchUp asks the leader for its commit index until it answers or
// the node stops, and makes it the node's ready index.
func (n *Node) learnCatchUp(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		idx, err := n.ReadIndex(ctx)
		cancel()
		if err == nil && idx > 0 {
			n.catchUpTo.Store(idx)
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
