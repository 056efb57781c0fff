package cluster

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A full disk is an answered condition, not a crash or a silent loss.
// The node watches the free space of the file systems holding its Raft
// log and its database, and keeps a floor (Config.MinFreeBytes): below
// it, and while its state machine is stopped (fsm.Stall), it proposes no
// write and forwards none (507, or 503 for a stall, both with the reason),
// so the log never reaches the point where an append fails: a leader whose
// append fails steps down and is elected again, over and over. The floor
// also keeps room for the compaction and snapshots that free space. A
// leader that cannot write hands leadership to another voter. Probes and
// the cluster view report the condition (StorageStatus); writes resume by
// themselves once space is freed.

// DefaultMinFreeBytes is the default free-space floor.
const DefaultMinFreeBytes = 256 << 20

// storageCheckEvery is how often the free space is measured.
const storageCheckEvery = 500 * time.Millisecond

// ErrDiskFull is the cause of a *DiskFullError.
var ErrDiskFull = errors.New("cluster: disk full")

// DiskFullError refuses a write of a node whose disk is below its floor.
type DiskFullError struct {
	Node        string
	Free, Floor uint64
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("the disk of node %s is full (%s free, the floor is %s); writes resume when space is freed",
		e.Node, humanBytes(e.Free), humanBytes(e.Floor))
}

func (e *DiskFullError) Unwrap() error { return ErrDiskFull }

// ErrStalled is the cause of a *StalledError.
var ErrStalled = errors.New("cluster: state machine stopped")

// StalledError refuses a write of a node whose state machine stopped.
type StalledError struct {
	Node   string
	Reason string
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("node %s cannot take writes: its state machine %s", e.Node, e.Reason)
}

func (e *StalledError) Unwrap() error { return ErrStalled }

// StorageStatus is this node's storage as it reports it.
type StorageStatus struct {
	FreeBytes    uint64 `json:"free_bytes"`
	MinFreeBytes uint64 `json:"min_free_bytes"`
	// DiskFull is set below the floor, or when the state machine stopped
	// for a full disk.
	DiskFull bool `json:"disk_full"`
	// Stalled is set while the state machine is stopped at an entry.
	Stalled     bool   `json:"stalled"`
	StallIndex  uint64 `json:"stall_index,omitempty"`
	StallReason string `json:"stall_reason,omitempty"`
}

// Condition names the storage condition: "ok", "disk full" or "stalled".
func (s StorageStatus) Condition() string {
	switch {
	case s.DiskFull:
		return "disk full"
	case s.Stalled:
		return "stalled"
	}
	return "ok"
}

// storage measures the free space of the node's directories.
type storage struct {
	dirs  []string
	floor uint64
	free  atomic.Uint64 // the least free space of dirs, last measured
}

func newStorage(floor uint64, dirs ...string) *storage {
	s := &storage{floor: floor}
	seen := map[string]bool{}
	for _, d := range dirs {
		if d = filepath.Clean(d); d != "" && !seen[d] {
			seen[d] = true
			s.dirs = append(s.dirs, d)
		}
	}
	s.measure()
	return s
}

// measure reads the free space now (the least over the directories); a
// directory that cannot be measured does not count.
func (s *storage) measure() uint64 {
	least := ^uint64(0)
	for _, d := range s.dirs {
		var st unix.Statfs_t
		if unix.Statfs(d, &st) == nil {
			least = min(least, st.Bavail*uint64(st.Bsize))
		}
	}
	s.free.Store(least)
	return least
}

func (s *storage) low() bool { return s.free.Load() < s.floor }

// Storage reports this node's storage condition.
func (n *Node) Storage() StorageStatus {
	st := StorageStatus{FreeBytes: n.storage.free.Load(), MinFreeBytes: n.storage.floor}
	st.DiskFull = n.storage.low()
	if s := n.sm.Stalled(); s != nil {
		st.Stalled, st.StallIndex, st.StallReason = true, s.Index, s.Reason
		st.DiskFull = st.DiskFull || s.DiskFull
	}
	return st
}

// writable is nil when this node may propose or forward a write.
func (n *Node) writable() error {
	if s := n.sm.Stalled(); s != nil {
		if s.DiskFull {
			return &DiskFullError{Node: n.cfg.NodeID, Free: n.storage.free.Load(), Floor: n.storage.floor}
		}
		return &StalledError{Node: n.cfg.NodeID, Reason: s.Reason}
	}
	if n.storage.low() {
		// Measure again: space may have been freed since the last tick.
		if n.storage.measure() < n.storage.floor {
			return &DiskFullError{Node: n.cfg.NodeID, Free: n.storage.free.Load(), Floor: n.storage.floor}
		}
	}
	return nil
}

// watchStorage measures the free space every storageCheckEvery and, while
// this node leads but cannot write, hands leadership to another voter (at
// most every leadershipHandEvery).
func (n *Node) watchStorage(stop <-chan struct{}) {
	t := time.NewTicker(storageCheckEvery)
	defer t.Stop()
	var lastHand time.Time
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		n.storage.measure()
		err := n.writable()
		if err == nil || !n.IsLeader() || time.Since(lastHand) < leadershipHandEvery {
			continue
		}
		if voters := n.otherVoters(); voters == 0 {
			continue
		}
		lastHand = time.Now()
		n.cfg.Logger.Warn("handing leadership to another voter: this node cannot write", "reason", err)
		n.libs.HandOver()
		if herr := n.raft.LeadershipTransfer().Error(); herr != nil {
			n.cfg.Logger.Warn("leadership transfer failed", "err", herr)
		}
	}
}

// leadershipHandEvery spaces the attempts of a leader that cannot write to
// hand leadership over.
const leadershipHandEvery = 5 * time.Second

// humanBytes renders n bytes for messages.
func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
