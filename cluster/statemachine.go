package cluster

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"svcd/fsm"
)

// StateMachine is what the node needs from the replicated state machine.
type StateMachine interface {
	ApplyBatch(entries []fsm.Entry) []fsm.Result
	Snapshot() (*fsm.Snapshot, error)
	Restore(r io.Reader) error
	AppliedIndex() uint64
	// WaitApplied blocks until the state machine has applied idx (or ctx
	// ends): the forwarding hop waits on it instead of polling.
	WaitApplied(ctx context.Context, idx uint64) error
	// Stalled is the stall in progress (nil while applying).
	Stalled() *fsm.Stall
	// Path is the database file (its file system's free space counts).
	Path() string
	// Interrupt ends the wait of a stopped apply and refuses later ones;
	// the owner closes the state machine after the node.
	Interrupt()
}

// raftFSM adapts a StateMachine to raft.BatchingFSM: it converts log entries
// and hands them over; nothing else happens here.
type raftFSM struct {
	sm StateMachine
	// onApply (nil: none) is told each batch's apply time; snapshots
	// (nil: not counted) counts the snapshots persisted.
	onApply   func(entries int, took time.Duration)
	snapshots *atomic.Uint64
	// times (nil: none) remembers when each batch was applied (traces).
	times *applyTimes
}

var _ raft.BatchingFSM = (*raftFSM)(nil)

func (f *raftFSM) ApplyBatch(logs []*raft.Log) []any {
	entries := make([]fsm.Entry, len(logs))
	for i, l := range logs {
		entries[i] = toEntry(l)
	}
	start := time.Now()
	res := f.sm.ApplyBatch(entries)
	end := time.Now()
	if f.onApply != nil {
		f.onApply(len(entries), end.Sub(start))
	}
	if f.times != nil && len(logs) > 0 {
		f.times.record(logs[0].Index, logs[len(logs)-1].Index, start, end)
	}
	out := make([]any, len(res))
	for i := range res {
		out[i] = res[i]
	}
	return out
}

func (f *raftFSM) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

func toEntry(l *raft.Log) fsm.Entry {
	if l.Type != raft.LogCommand {
		return fsm.Entry{Index: l.Index, Membership: true}
	}
	return fsm.Entry{Index: l.Index, Data: l.Data}
}

func (f *raftFSM) Snapshot() (raft.FSMSnapshot, error) {
	sn, err := f.sm.Snapshot()
	if err != nil {
		return nil, err
	}
	return &raftSnapshot{sn: sn, count: f.snapshots}, nil
}

func (f *raftFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.sm.Restore(rc)
}

type raftSnapshot struct {
	sn    *fsm.Snapshot
	count *atomic.Uint64 // nil: not counted
}

func (s *raftSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.sn.WriteTo(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return err
	}
	if s.count != nil {
		s.count.Add(1)
	}
	return nil
}

func (s *raftSnapshot) Release() { s.sn.Release() }
