package engine

import (
	"context"

	"svcd/fsm"
)

// readOnly reports whether every entry of a batch reads.
func readOnly(ops []BatchOp) bool {
	for _, op := range ops {
		if op.Action != BatchGet && op.Action != BatchList {
			return false
		}
	}
	return true
}

// readBatch serves a batch that only reads from this replica, in one read
// transaction (every entry sees the same state), as p with each entry's
// own request context: what the same batch would answer through the log,
// without a log entry and without the apply loop. The first failing entry
// fails the batch, as in the log.
func (rs *Records) readBatch(ctx context.Context, p Principal, ops []BatchOp) (*BatchResult, error) {
	cis := make([]*Coll, len(ops))
	for i, op := range ops {
		ci := rs.e.Coll(op.Collection)
		switch {
		case ci == nil:
			return nil, BatchError(i, ErrNotFound)
		case !p.reaches(ci.Name):
			return nil, BatchError(i, ErrInsufficientScope)
		}
		if lq := op.listQuery(); op.Action == BatchList {
			if err := lq.unsupportedInBatch(); err != nil {
				return nil, BatchError(i, err)
			}
		}
		cis[i] = ci
	}
	out := &BatchResult{Items: make([]BatchItem, len(ops))}
	err := rs.e.store.View(ctx, func(r *fsm.Reader) error {
		for i, op := range ops {
			who := p
			who.Request = op.Request
			src := rs.e.replicaSource(r, who)
			if op.Action == BatchGet {
				lq := op.listQuery()
				rec, err := rs.getRecordIn(src, cis[i], op.ID, lq.Fields, lq.Expand)
				if err != nil {
					return BatchError(i, err)
				}
				out.Items[i].Body = rec.JSON
				continue
			}
			q := op.listQuery()
			q.Search, q.HasNear = "", false
			list, err := rs.listRecordsIn(src, cis[i], q)
			if err != nil {
				return BatchError(i, err)
			}
			out.Items[i].Body = list.AppendJSON(nil)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
