package stack

import (
	"context"
	"time"

	"svcd/cluster"
	"svcd/engine"
)

// caughtUpWrites is the engine's record service whose writes, when this
// node was behind the leader, are checked again once it has caught up.
//
// A write runs its checks on this node's replica before it is proposed
// (the collection and the record exist, the ETag matches, the rules and
// relations admit it); the apply checks again on every node. A follower
// that has not applied a change committed through another node a moment
// before refuses a write that the cluster would accept: 404 for a
// collection or record created there, 412 for an ETag newer than its copy,
// 403 or 422 from a rule or a relation reading rows it lacks. So a
// refusal of those kinds is followed by one read index: if the leader's
// commit index is past what this node had applied when it checked, the
// node waits for it and runs the write once more. A refusal on a current
// replica (the usual case, and every refusal on the leader) costs nothing
// more. Running a refused write again is safe: a refusal wrote nothing.
type caughtUpWrites struct {
	*engine.Records
	node *cluster.Node
}

// catchUpWait bounds the wait for the leader's commit index; past it the
// first refusal stands.
const catchUpWait = 2 * time.Second

// mayBeStale reports whether a refusal of kind k may come from a replica
// that is behind.
func mayBeStale(k engine.Kind) bool {
	switch k {
	case engine.KindNotFound, engine.KindPrecondition, engine.KindForbidden, engine.KindValidation:
		return true
	}
	return false
}

// retry runs write, and once more after catching up when its refusal may
// come from this node being behind.
func retry[T any](ctx context.Context, n *cluster.Node, write func() (T, uint64, error)) (T, uint64, error) {
	before := n.AppliedIndex()
	v, idx, err := write()
	if e := engine.AsError(err); e == nil || !mayBeStale(e.Kind) || n.IsLeader() {
		return v, idx, err
	}
	wctx, cancel := context.WithTimeout(ctx, catchUpWait)
	defer cancel()
	ri, rerr := n.ReadIndex(wctx)
	if rerr != nil || ri <= before || n.WaitIndex(wctx, ri) != nil {
		return v, idx, err
	}
	return write()
}

func (w caughtUpWrites) CreateRecord(ctx context.Context, p engine.Principal, coll string, body []byte) (*engine.Record, uint64, error) {
	return retry(ctx, w.node, func() (*engine.Record, uint64, error) { return w.Records.CreateRecord(ctx, p, coll, body) })
}

func (w caughtUpWrites) UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, body []byte, ifMatch string) (*engine.Record, uint64, error) {
	return retry(ctx, w.node, func() (*engine.Record, uint64, error) {
		return w.Records.UpdateRecord(ctx, p, coll, id, body, ifMatch)
	})
}

func (w caughtUpWrites) DeleteRecord(ctx context.Context, p engine.Principal, coll, id, ifMatch string) (uint64, error) {
	_, idx, err := retry(ctx, w.node, func() (struct{}, uint64, error) {
		idx, err := w.Records.DeleteRecord(ctx, p, coll, id, ifMatch)
		return struct{}{}, idx, err
	})
	return idx, err
}

func (w caughtUpWrites) Batch(ctx context.Context, p engine.Principal, ops []engine.BatchOp) (*engine.BatchResult, uint64, error) {
	return retry(ctx, w.node, func() (*engine.BatchResult, uint64, error) { return w.Records.Batch(ctx, p, ops) })
}
