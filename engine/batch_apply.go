package engine

import (
	"strconv"

	"svcd/fsm"
)

// batchCmd is a whole batch: its entries run in order inside the one
// command's savepoint, so the first failure rolls all of them back.
type batchCmd struct {
	Ops []batchOpCmd `json:"ops"`
	// ReadBudget bounds the reads of the batch together, in fsm budget
	// ticks (batch_budget.go); 0 for commands proposed before the bound.
	ReadBudget int64 `json:"read_budget,omitempty"`
}

// batchOpCmd is one entry; exactly one member is set. The write members
// are the single-record commands, applied by the same code.
type batchOpCmd struct {
	Create *recordCreateCmd `json:"create,omitempty"`
	Update *recordUpdateCmd `json:"update,omitempty"`
	Delete *recordDeleteCmd `json:"delete,omitempty"`
	Read   *batchReadCmd    `json:"read,omitempty"`
	// Upsert is PocketBase's upsert (batch_upsert.go): only in commands
	// of type cmdBatchUpsert, so entries written before it decode as they
	// always did.
	Upsert *recordUpsertCmd `json:"upsert,omitempty"`
}

// batchReadCmd is a get (List false) or a list inside a batch. It reads the
// transaction, so it sees the batch's earlier writes; rules see Env.
type batchReadCmd struct {
	Coll  string `json:"coll"`
	Ver   int64  `json:"ver"`
	Admin bool   `json:"admin"`
	// Scopes are an API token's (nil for sessions): with Admin, the
	// reader acts as an admin inside them and reaches nothing outside.
	Scopes     []string `json:"scopes,omitempty"`
	List       bool     `json:"list,omitempty"`
	ID         string   `json:"id,omitempty"`
	Fields     string   `json:"fields,omitempty"`
	Expand     string   `json:"expand,omitempty"`
	Page       int      `json:"page,omitempty"`
	PerPage    int      `json:"per_page,omitempty"`
	Sort       string   `json:"sort,omitempty"`
	Filter     string   `json:"filter,omitempty"`
	SkipTotal  bool     `json:"skip_total,omitempty"`
	CursorMode bool     `json:"cursor_mode,omitempty"`
	Cursor     string   `json:"cursor,omitempty"`
	Env        *RuleEnv `json:"env,omitempty"`
}

func (rs *Records) applyBatch(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[batchCmd](cmd)
	if err != nil {
		return nil, err
	}
	if cmd.Type == cmdBatch {
		// Write modifiers ride only in a cmdBatchUpsert.
		for _, op := range c.Ops {
			if op.Update != nil {
				op.Update.Mods = nil
			}
		}
	}
	out := &BatchResult{Items: make([]BatchItem, len(c.Ops))}
	budget := newReadBudget(c.ReadBudget)
	colls := &batchColls{}
	created := false
	applyOp := func(tx *fsm.Tx, op batchOpCmd) ([]byte, error) {
		if op.Upsert != nil {
			body, c, err := rs.applyUpsert(tx, op.Upsert, colls)
			created = c
			return body, err
		}
		return rs.applyBatchOp(tx, op, colls)
	}
	for i, op := range c.Ops {
		created = false
		body, err := budget.apply(tx, op, applyOp)
		if err != nil {
			return nil, BatchError(i, staleETag(err, op, c.Ops[:i]))
		}
		out.Items[i].Body = body
		out.Items[i].Created = created
	}
	return out, nil
}

// staleETag drops the ETag of a failed precondition when the record's tag
// came from an earlier entry of the same batch (one that wrote the record,
// or a delete, which may change others through relations): that state is
// rolled back, so the tag would name a version that never existed.
func staleETag(err error, op batchOpCmd, earlier []batchOpCmd) error {
	de := AsError(err)
	if de == nil || de.ETag == "" {
		return err
	}
	coll, id := "", ""
	switch {
	case op.Update != nil:
		coll, id = op.Update.Coll, op.Update.ID
	case op.Delete != nil:
		coll, id = op.Delete.Coll, op.Delete.ID
	case op.Upsert != nil:
		coll, id = op.Upsert.Coll, op.Upsert.ID
	}
	for _, e := range earlier {
		touched := e.Delete != nil ||
			(e.Create != nil && e.Create.Coll == coll && e.Create.ID == id) ||
			(e.Update != nil && e.Update.Coll == coll && e.Update.ID == id) ||
			(e.Upsert != nil && e.Upsert.Coll == coll && e.Upsert.ID == id)
		if touched {
			cp := *de
			cp.ETag = ""
			return &cp
		}
	}
	return err
}

// batchColls remembers the collections a batch's creates resolved: a
// batch holds no schema change, so a collection at a version found once
// in the batch's transaction stays so for the rest of it, and the
// version check need not run again for each of its rows.
type batchColls struct {
	last *Coll
	ver  int64
}

func (b *batchColls) get(tx *fsm.Tx, e *Engine, id string, ver int64) (*Coll, error) {
	if b.last != nil && b.last.ID == id && b.ver == ver {
		return b.last, nil
	}
	ci, err := e.CollForApply(tx, id, ver)
	if err != nil {
		return nil, err
	}
	b.last, b.ver = ci, ver
	return ci, nil
}

// applyBatchOp applies one entry and renders its answer body. Rendering
// only shapes what the proposer answers; the state it leaves is the same on
// every node.
func (rs *Records) applyBatchOp(tx *fsm.Tx, op batchOpCmd, colls *batchColls) ([]byte, error) {
	switch {
	case op.Create != nil:
		ci, err := colls.get(tx, rs.e, op.Create.Coll, op.Create.Ver)
		if err != nil {
			return nil, err
		}
		row, err := rs.recordCreateIn(tx, ci, op.Create)
		if err != nil {
			return nil, err
		}
		return rs.renderRow(tx, op.Create.Coll, op.Create.Ver, row, op.Create.Admin), nil
	case op.Update != nil:
		row, err := rs.recordUpdate(tx, op.Update)
		if err != nil {
			return nil, err
		}
		return rs.renderRow(tx, op.Update.Coll, op.Update.Ver, row, op.Update.Admin), nil
	case op.Delete != nil:
		return nil, rs.recordDelete(tx, op.Delete)
	case op.Read != nil:
		return rs.batchRead(tx, op.Read)
	}
	return nil, Errorf(KindBadRequest, "Empty batch entry")
}

func (rs *Records) renderRow(tx *fsm.Tx, coll string, ver int64, row []any, admin bool) []byte {
	ci := rs.e.renderColl(tx, coll, ver)
	if ci == nil {
		return nil
	}
	return ci.appendRecord(make([]byte, 0, 256), row, admin, nil)
}

func (rs *Records) batchRead(tx *fsm.Tx, r *batchReadCmd) ([]byte, error) {
	ci, err := rs.e.CollForApply(tx, r.Coll, r.Ver)
	if err != nil {
		return nil, err
	}
	if rc := rs.e.renderColl(tx, ci.ID, ci.Version); rc != nil {
		ci = rc
	}
	src := rs.e.txSource(tx, readerOf(r.Admin, r.Scopes), r.Env)
	if !r.List {
		rec, err := rs.getRecordIn(src, ci, r.ID, r.Fields, r.Expand)
		if err != nil {
			return nil, err
		}
		return rec.JSON, nil
	}
	list, err := rs.listRecordsIn(src, ci, ListQuery{Page: r.Page, PerPage: r.PerPage, Sort: r.Sort, Fields: r.Fields,
		SkipTotal: r.SkipTotal, Filter: r.Filter, Expand: r.Expand, CursorMode: r.CursorMode, Cursor: r.Cursor})
	if err != nil {
		return nil, err
	}
	return list.AppendJSON(nil), nil
}

// AppendJSON renders a list page as the body of a list answer: data, page,
// perPage, totalItems, totalPages and, in cursor mode, nextCursor.
func (l *RecordList) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"data":`...)
	buf = append(buf, l.Data...)
	buf = append(buf, `,"page":`...)
	buf = strconv.AppendInt(buf, int64(l.Page), 10)
	buf = append(buf, `,"perPage":`...)
	buf = strconv.AppendInt(buf, int64(l.PerPage), 10)
	buf = append(buf, `,"totalItems":`...)
	buf = strconv.AppendInt(buf, int64(l.TotalItems), 10)
	buf = append(buf, `,"totalPages":`...)
	buf = strconv.AppendInt(buf, int64(l.TotalPages), 10)
	if l.CursorMode {
		buf = append(buf, `,"nextCursor":`...)
		if l.NextCursor == "" {
			buf = append(buf, "null"...)
		} else {
			buf = strconv.AppendQuote(buf, l.NextCursor)
		}
	}
	if l.Vector != nil {
		buf = append(buf, `,"_vector":{"scanned":`...)
		buf = strconv.AppendInt(buf, int64(l.Vector.Scanned), 10)
		buf = append(buf, `,"truncated":`...)
		buf = strconv.AppendBool(buf, l.Vector.Truncated)
		buf = append(buf, '}')
	}
	return append(buf, '}')
}
