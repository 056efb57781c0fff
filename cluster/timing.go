package cluster

import (
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Raft's failure-detection timing on a node with peers (DESIGN.md,
// "Failure detection"). hashicorp/raft's leader sends a heartbeat a tenth
// to a fifth of the heartbeat timeout after the previous one was answered,
// so a follower hears from an idle leader every round trip plus 80-160 ms:
// every 280-360 ms at a 200 ms round trip between regions, every 580-660
// ms at the fault suite's worst latency (250 ms each way). 800 ms is four
// 200 ms round trips: it absorbs one retransmitted heartbeat (Linux's
// minimum retransmission timeout is 200 ms) between regions and stays
// above the suite's slowest link, and a dead leader is replaced in about
// 1.5 s (two of its timeouts at most: the survivors' timers fire at random
// one to two timeouts apart, and with pre-vote the second one must have
// fired too). The lease (a leader that has heard from no quorum for this
// long steps down) leaves 240 ms over the 360 ms gap.
const (
	DefaultHeartbeatTimeout   = 800 * time.Millisecond
	DefaultElectionTimeout    = 800 * time.Millisecond
	DefaultLeaderLeaseTimeout = 600 * time.Millisecond
	// MinTimeout is the smallest timeout Timing accepts: below it a
	// scheduling hiccup on a loaded machine is an election.
	MinTimeout = 10 * time.Millisecond
)

// Timing is Raft's failure-detection timing for a node with peers
// (single-node mode keeps its own short timeouts). A zero field means its
// default.
type Timing struct {
	// HeartbeatTimeout: a follower that has not heard from the leader for
	// this long stands for election. It checks at random moments one to
	// two timeouts apart, and the leader sends a heartbeat every tenth to
	// fifth of it once the previous one was answered.
	HeartbeatTimeout time.Duration
	// ElectionTimeout: how long a candidate waits for votes before it
	// tries again (randomized between one and two of it); at least the
	// heartbeat timeout.
	ElectionTimeout time.Duration
	// LeaderLeaseTimeout: a leader that has heard from no quorum for this
	// long steps down; at most the heartbeat timeout.
	LeaderLeaseTimeout time.Duration
}

// WithDefaults returns t with every zero field set to its default.
func (t Timing) WithDefaults() Timing {
	if t.HeartbeatTimeout == 0 {
		t.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if t.ElectionTimeout == 0 {
		t.ElectionTimeout = max(DefaultElectionTimeout, t.HeartbeatTimeout)
	}
	if t.LeaderLeaseTimeout == 0 {
		t.LeaderLeaseTimeout = min(DefaultLeaderLeaseTimeout, t.HeartbeatTimeout)
	}
	return t
}

// Validate checks t after its defaults are filled in: every timeout at
// least MinTimeout, the lease no longer than the heartbeat timeout and the
// election timeout no shorter (raft refuses either).
func (t Timing) Validate() error {
	t = t.WithDefaults()
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"heartbeat timeout", t.HeartbeatTimeout},
		{"election timeout", t.ElectionTimeout},
		{"leader lease timeout", t.LeaderLeaseTimeout},
	} {
		if f.d < MinTimeout {
			return fmt.Errorf("%s %s is below the minimum %s", f.name, f.d, MinTimeout)
		}
	}
	if t.LeaderLeaseTimeout > t.HeartbeatTimeout {
		return fmt.Errorf("leader lease timeout %s is longer than the heartbeat timeout %s", t.LeaderLeaseTimeout, t.HeartbeatTimeout)
	}
	if t.ElectionTimeout < t.HeartbeatTimeout {
		return fmt.Errorf("election timeout %s is shorter than the heartbeat timeout %s", t.ElectionTimeout, t.HeartbeatTimeout)
	}
	return nil
}

// apply validates t and sets it on rc, then lets raft check the whole
// configuration, so a combination raft refuses is a clear startup error
// rather than a failure inside raft.NewRaft.
func (t Timing) apply(rc *raft.Config) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("cluster: raft timing: %w", err)
	}
	t = t.WithDefaults()
	rc.HeartbeatTimeout = t.HeartbeatTimeout
	rc.ElectionTimeout = t.ElectionTimeout
	rc.LeaderLeaseTimeout = t.LeaderLeaseTimeout
	if err := raft.ValidateConfig(rc); err != nil {
		return fmt.Errorf("cluster: raft configuration: %w", err)
	}
	return nil
}
