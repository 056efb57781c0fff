package cluster

import (
	"fmt"

	"github.com/hashicorp/raft"

	"svcd/fsm"
)

// reconcile lines the SQLite replica up with the Raft state before Raft
// starts, and tells whether Raft may skip restoring its latest snapshot.
//
// The replica keeps its applied index in the same transaction as the data,
// so it is usually at or past the latest snapshot: then restoring the
// snapshot would only throw work away, and Raft replays the entries after
// the snapshot (the replica skips those it already holds). If the replica is
// behind the snapshot (a lost or older database file) but the log still
// holds every entry it misses up to the snapshot, those committed entries
// are applied here; otherwise the snapshot must be restored.
func (n *Node) reconcile() (noRestore bool, err error) {
	metas, err := n.snaps.List()
	if err != nil {
		return false, fmt.Errorf("cluster: list snapshots: %w", err)
	}
	if len(metas) == 0 {
		return true, nil
	}
	snap := metas[0]
	applied := n.sm.AppliedIndex()
	if applied >= snap.Index {
		return true, nil
	}
	first, err := n.logs.FirstIndex()
	if err != nil {
		return false, fmt.Errorf("cluster: read log: %w", err)
	}
	if first == 0 || first > applied+1 {
		n.cfg.Logger.Info("replica behind the latest snapshot; restoring it",
			"applied", applied, "snapshot", snap.Index)
		return false, nil
	}
	var batch []fsm.Entry
	for idx := applied + 1; idx <= snap.Index; idx++ {
		var l raft.Log
		if err := n.logs.GetLog(idx, &l); err != nil {
			n.cfg.Logger.Info("log gap before the snapshot; restoring it", "index", idx, "err", err)
			return false, nil
		}
		switch l.Type {
		case raft.LogCommand:
			batch = append(batch, fsm.Entry{Index: l.Index, Data: l.Data})
		case raft.LogConfiguration:
			batch = append(batch, fsm.Entry{Index: l.Index, Membership: true})
		}
		if len(batch) >= 256 {
			n.sm.ApplyBatch(batch)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		n.sm.ApplyBatch(batch)
	}
	n.cfg.Logger.Info("replayed committed log entries up to the snapshot", "from", applied+1, "to", snap.Index)
	return true, nil
}
