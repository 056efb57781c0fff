package cluster

// A linearizable read waits until the local replica has applied the
// leader's commit index, after the leader has confirmed with a quorum that
// it still leads. That index is only complete once the leader has
// committed an entry of its own term (Raft §8): a node elected leader
// knows the commit index it last heard as a follower, and hashicorp/raft
// advances it only when an entry of the new term (its no-op) commits. In
// the gap, entries the previous leader committed and acknowledged, but
// whose commit this node had not yet heard of, are missing from the
// index, and a read could return a value older than a write already
// answered. The jepsen register workload caught exactly this after a
// leader partition: reads that started after an acknowledged
// compare-and-set returned the value before it.
//
// So the first read of a term on a leader waits for a barrier entry to
// commit (and apply) in that term; later reads of the term only confirm
// leadership.

// leaderReadIndex confirms leadership with a quorum and returns the commit
// index: everything a read must see.
func (n *Node) leaderReadIndex() rpcReply {
	term := n.raft.CurrentTerm()
	if n.termCommitted.Load() != term {
		if err := n.raft.Barrier(n.cfg.LeaderWait).Error(); err != nil {
			return rpcReply{NotLeader: true}
		}
		// The barrier committed in a term this node leads, at or after
		// term: the commit index now covers every earlier term's entries.
		n.termCommitted.Store(term)
	}
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return rpcReply{NotLeader: true}
	}
	return rpcReply{Index: n.raft.CommitIndex()}
}
