package stack_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"svcd/engine"
)

// opBatch drives batch commands into the replayed log: 1 to 8 entries
// mixing creates, updates (some with a stale If-Match), deletes, gets,
// lists and upserts, against records that exist or not, so that some batches commit
// and others roll back whole at apply time (a relation to a missing
// record, a unique value, a missing record, a failed precondition).
func (w *detWorkload) opBatch(r *rand.Rand) {
	n := 1 + r.IntN(8)
	ops := make([]engine.BatchOp, 0, n)
	colls := make([]string, 0, n)
	for i := 0; i < n; i++ {
		logical, id := w.pickCollection(r)
		c, err := w.eng.Schema().Collection(id)
		if err != nil {
			w.t.Errorf("collection %s vanished: %v", logical, err)
			return
		}
		rid, etag := w.pickRecord(r, id)
		if rid == "" || r.IntN(10) == 0 {
			rid, etag = randID(r), ""
		}
		op := engine.BatchOp{Collection: id, ID: rid, Request: engine.RequestInfo{Context: "default"}}
		switch k := r.IntN(11); {
		case k < 4:
			op.Action, op.ID = engine.BatchCreate, ""
			op.Body, _ = json.Marshal(w.body(r, c, false))
		case k < 6:
			op.Action, op.IfMatch = engine.BatchUpdate, w.ifMatch(r, etag)
			op.Body, _ = json.Marshal(w.body(r, c, true))
		case k < 7:
			op.Action, op.IfMatch = engine.BatchDelete, w.ifMatch(r, etag)
		case k < 8:
			op.Action = engine.BatchGet
		case k < 10:
			op.Action = engine.BatchList
			op.List = &engine.ListQuery{Page: 1, PerPage: 1 + r.IntN(5), Sort: "-created", Filter: fmt.Sprintf("created > %d", r.IntN(10))}
		default:
			// An upsert of a record that exists or not: the apply decides.
			body := w.body(r, c, false)
			body["id"] = rid
			op.Action, op.ID = engine.BatchUpsert, ""
			op.Body, _ = json.Marshal(body)
		}
		ops = append(ops, op)
		colls = append(colls, id)
	}
	res, idx, err := w.eng.Records().Batch(w.ctx, w.admin, ops)
	w.note(fmt.Sprintf("batch of %d", n), idx, err)
	w.mu.Lock()
	if err == nil {
		w.kinds["batch ok"]++
	} else if idx > 0 {
		w.kinds["batch rolled back"]++
	}
	w.mu.Unlock()
	if err != nil {
		return
	}
	for i, op := range ops {
		switch op.Action {
		case engine.BatchCreate, engine.BatchUpdate, engine.BatchUpsert:
			// The batch answer has no ETag: later If-Match on these is
			// either absent or "*".
			w.remember(colls[i], &engine.Record{JSON: res.Items[i].Body})
		case engine.BatchDelete:
			w.forget(colls[i], op.ID)
		}
	}
}
