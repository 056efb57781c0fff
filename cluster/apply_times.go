package cluster

import (
	"sync"
	"time"
)

// applyTimes remembers when the state machine applied the last batches
// (first and last index, start and end), in memory on this node only, so
// a traced write can show the Raft commit and the apply as two spans:
// hashicorp/raft's future answers only after the apply. Nothing of it
// reaches the log or the state.
type applyTimes struct {
	mu   sync.Mutex
	ring [64]appliedBatch
	next int
}

type appliedBatch struct {
	first, last uint64
	start, end  time.Time
}

func (a *applyTimes) record(first, last uint64, start, end time.Time) {
	a.mu.Lock()
	a.ring[a.next] = appliedBatch{first, last, start, end}
	a.next = (a.next + 1) % len(a.ring)
	a.mu.Unlock()
}

// lookup returns when the batch holding idx was applied.
func (a *applyTimes) lookup(idx uint64) (start, end time.Time, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.ring {
		if idx != 0 && b.first <= idx && idx <= b.last {
			return b.start, b.end, true
		}
	}
	return time.Time{}, time.Time{}, false
}
