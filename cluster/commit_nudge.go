package cluster

import "time"

// A follower learns that an entry committed only from the leader's next
// AppendEntries: hashicorp/raft's heartbeats do not carry the commit
// index, and a leader with no new entry sends AppendEntries only after
// CommitTimeout, randomized between 50 and 100 ms. A write forwarded by a
// follower is answered once the follower has applied it (so the caller
// reads it there), so a lone writer near a follower waited that timer on
// every write.
//
// After the leader has applied a forwarded write, it appends a barrier
// entry (a no-op for the state machine). Raft sends it to every follower
// at once, and that AppendEntries carries the commit index covering the
// write: the follower applies the write one message after the leader
// committed it instead of one timer later. Nudges coalesce: while a
// barrier is in flight, the writes that commit meanwhile ask for at most
// one more, so under load it costs one small entry per replication round,
// and an idle cluster sends nothing. docs/benchmarks.md has the
// measurements behind this choice.

// nudgeFollowers asks for a barrier after a forwarded write applied here.
func (n *Node) nudgeFollowers() {
	select {
	case n.nudge <- struct{}{}:
	default: // one is pending: it covers this write too
	}
}

// runNudges appends the barriers nudgeFollowers asks for, one at a time,
// while this node leads.
func (n *Node) runNudges(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-n.nudge:
		}
		if !n.IsLeader() || n.writable() != nil {
			continue
		}
		if err := n.raft.Barrier(n.cfg.LeaderWait).Error(); err != nil && !n.closing.Load() {
			n.cfg.Logger.Debug("commit nudge", "err", err)
			time.Sleep(10 * time.Millisecond)
		}
	}
}
