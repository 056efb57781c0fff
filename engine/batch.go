package engine

import (
	"context"
	"errors"
	"fmt"
)

// MaxBatchOps is the most operations one batch may carry (SPEC.md limits).
const MaxBatchOps = 100

// BatchAction is what one batch entry does.
type BatchAction string

// The actions of a batch entry.
const (
	BatchCreate BatchAction = "create"
	BatchList   BatchAction = "list"
	BatchGet    BatchAction = "get"
	BatchUpdate BatchAction = "update"
	BatchDelete BatchAction = "delete"
)

// BatchOp is one entry of a batch as the HTTP layer parsed it.
type BatchOp struct {
	Action     BatchAction
	Collection string
	ID         string // get, update, delete
	Body       []byte // create, update: the JSON body, unless Fields is set
	// Fields is the body of a create or update already decoded (numbers
	// as json.Number), for a caller that decoded it with the request.
	Fields  map[string]any
	IfMatch string // update, delete
	// Request is what rules of this entry may read (@request.*): the
	// entry's method and query over the batch request's headers.
	Request RequestInfo
	// List holds the list parameters (nil: the defaults); Fields and
	// Expand also serve get. A pointer: a batch of creates carries none.
	List *ListQuery
}

// listQuery is the entry's list parameters, the defaults when it has none.
func (op *BatchOp) listQuery() ListQuery {
	if op.List == nil {
		return ListQuery{}
	}
	return *op.List
}

// BatchItem is the outcome of one entry: the JSON body of its answer (a
// record, a list page, or nil for a delete).
type BatchItem struct {
	Body []byte `json:"body,omitempty"`
	// Created is set for an upsert entry that created its record.
	Created bool `json:"created,omitempty"`
}

// BatchResult is the state machine's answer to a batch command.
type BatchResult struct {
	Items []BatchItem `json:"items"`
}

// BatchError wraps the failure of entry index (0-based, the position in
// the request's array): the message names it, the kind, details and ETag
// are the cause's.
func BatchError(index int, err error) error {
	if errors.Is(err, ErrSchemaMoved) {
		return err // retried whole by the proposer
	}
	if de := AsError(err); de != nil {
		return &Error{Kind: de.Kind, Message: fmt.Sprintf("batch failed at request %d: %s", index, de.Message),
			Details: de.Details, ETag: de.ETag, RetryAfter: de.RetryAfter}
	}
	return fmt.Errorf("batch failed at request %d: %w", index, err)
}

// Batch runs ops as one command: every entry is validated here, then the
// state machine applies them in order in one transaction, checking rules
// and If-Match per entry; the first failure rolls everything back. A batch
// that only reads is served from this replica instead (index 0).
func (rs *Records) Batch(ctx context.Context, p Principal, ops []BatchOp) (*BatchResult, uint64, error) {
	if len(ops) == 0 || len(ops) > MaxBatchOps {
		return nil, 0, FieldError("requests", fmt.Sprintf("must hold 1 to %d entries", MaxBatchOps))
	}
	if readOnly(ops) {
		out, err := rs.readBatch(ctx, p, ops)
		return out, 0, err
	}
	decoded := make([]map[string]any, len(ops))
	for i, op := range ops {
		if op.Action != BatchCreate && op.Action != BatchUpdate && op.Action != BatchUpsert {
			continue
		}
		if op.Fields != nil {
			decoded[i] = op.Fields
			continue
		}
		in, err := decodeBody(op.Body)
		if err != nil {
			return nil, 0, BatchError(i, err)
		}
		decoded[i] = in
	}
	intercepted, err := rs.interceptBatch(ctx, p, ops, decoded)
	if err != nil {
		return nil, 0, err
	}
	for attempt := 0; ; attempt++ {
		cmd := batchCmd{Ops: make([]batchOpCmd, len(ops)), ReadBudget: batchReadTicks}
		now := rs.e.now().Unix()
		shared := &batchShared{actor: actorOf(p)}
		for i, op := range ops {
			c, err := rs.prepareBatchOp(ctx, p, op, decoded[i], now, shared)
			if err != nil {
				return nil, 0, BatchError(i, err)
			}
			cmd.Ops[i] = c
		}
		typ := cmdBatch
		if cmd.needsUpsertType() {
			typ = cmdBatchUpsert
		}
		res, idx, err := rs.e.Propose(ctx, typ, cmd)
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		out, ok := res.(*BatchResult)
		if !ok {
			return nil, idx, fmt.Errorf("engine: batch result is %T", res)
		}
		for i, w := range intercepted {
			if w == nil {
				continue
			}
			id := ops[i].ID
			if c := cmd.Ops[i].Create; c != nil {
				id = c.ID
			} else if u := cmd.Ops[i].Upsert; u != nil {
				id = u.ID
			}
			rs.AfterWrite(ctx, w, id)
		}
		return out, idx, nil
	}
}

// interceptBatch runs the interceptor before each write entry, in order
// (each entry as its single request would be: the entry's own request,
// the body the interceptor left). The answer holds each entry's intercept (nil: none).
func (rs *Records) interceptBatch(ctx context.Context, p Principal, ops []BatchOp, decoded []map[string]any) ([]*InterceptedWrite, error) {
	if rs.e.reg.interceptor == nil {
		return nil, nil
	}
	out := make([]*InterceptedWrite, len(ops))
	for i, op := range ops {
		kind := ""
		switch op.Action {
		case BatchCreate:
			kind = EvRecordCreate
		case BatchUpdate:
			kind = EvRecordUpdate
		case BatchDelete:
			kind = EvRecordDelete
		case BatchUpsert:
			id, _ := decoded[i]["id"].(string)
			kind = rs.upsertKind(ctx, op.Collection, id)
		default:
			continue
		}
		ep := p
		ep.Request = op.Request
		w, err := rs.BeforeWrite(ctx, ep, kind, op.Collection, op.ID, decoded[i])
		if err != nil {
			return nil, BatchError(i, err)
		}
		out[i] = w
		decoded[i] = bodyOf(w, decoded[i])
	}
	return out, nil
}

// prepareBatchOp does for one entry what the single endpoint does before
// proposing: resolve the collection, answer what needs no row, validate,
// hash passwords, pick ids and capture the rule context.
func (rs *Records) prepareBatchOp(ctx context.Context, p Principal, op BatchOp, in map[string]any, now int64, shared *batchShared) (batchOpCmd, error) {
	p.Request = op.Request
	switch op.Action {
	case BatchCreate:
		ci, err := rs.writable(op.Collection)
		if err != nil {
			return batchOpCmd{}, err
		}
		admin, err := writeRights(p, ci)
		if err != nil {
			return batchOpCmd{}, err
		}
		if !admin && ci.CreateRule == nil {
			return batchOpCmd{}, ErrAdminOnly
		}
		in, verr := FoldCreateModifiers(ci, in)
		if verr != nil {
			return batchOpCmd{}, verr
		}
		id, values, verr := rs.prepareCreate(ci, in, admin, now)
		if verr != nil {
			return batchOpCmd{}, verr
		}
		env := shared.env(rs.e, p, ci, now, func() map[string]any { return bodyEnv(ci, in, func(i int) any { return values[i] }) })
		return batchOpCmd{Create: &recordCreateCmd{Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: id, Now: now, Values: values, Env: env, Actor: shared.actor}}, nil
	case BatchUpdate:
		ci, err := rs.writable(op.Collection)
		if err != nil {
			return batchOpCmd{}, err
		}
		admin, err := writeRights(p, ci)
		if err != nil {
			return batchOpCmd{}, err
		}
		if err := preWriteError(ci, ci.UpdateRule, admin); err != nil {
			return batchOpCmd{}, err
		}
		in, mods, verr := SplitModifiers(ci, in)
		if verr != nil {
			return batchOpCmd{}, verr
		}
		values, verr := rs.PrepareUpdate(ci, in, admin, now)
		if verr != nil {
			return batchOpCmd{}, verr
		}
		env := rs.e.envFor(p, ci, bodyEnv(ci, in, func(i int) any { return values[ci.fields[i].Name] }), now)
		was, err := rs.verifyOldPassword(ctx, ci, op.ID, in, admin, env)
		if err != nil {
			return batchOpCmd{}, err
		}
		return batchOpCmd{Update: &recordUpdateCmd{Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: op.ID, Now: now, Values: values,
			IfMatch: op.IfMatch, Env: env, Actor: actorOf(p), Account: true, PasswordWas: was, Mods: mods}}, nil
	case BatchUpsert:
		return rs.prepareUpsert(ctx, p, op, in, now, shared)
	case BatchDelete:
		ci, err := rs.writable(op.Collection)
		if err != nil {
			return batchOpCmd{}, err
		}
		admin, err := writeRights(p, ci)
		if err != nil {
			return batchOpCmd{}, err
		}
		if err := preWriteError(ci, ci.DeleteRule, admin); err != nil {
			return batchOpCmd{}, err
		}
		return batchOpCmd{Delete: &recordDeleteCmd{Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: op.ID, IfMatch: op.IfMatch, Now: now, Env: rs.e.envFor(p, ci, nil, now), Actor: actorOf(p)}}, nil
	case BatchGet, BatchList:
		ci := rs.e.Coll(op.Collection)
		if ci == nil {
			return batchOpCmd{}, ErrNotFound
		}
		if !p.reaches(ci.Name) {
			return batchOpCmd{}, ErrInsufficientScope
		}
		lq := op.listQuery()
		if op.Action == BatchList {
			if verr := lq.unsupportedInBatch(); verr != nil {
				return batchOpCmd{}, verr
			}
		}
		r := &batchReadCmd{Coll: ci.ID, Ver: ci.Version, Admin: p.IsAdmin(), Scopes: scopesOf(p), ID: op.ID, Env: rs.e.envFor(p, ci, nil, now),
			Fields: lq.Fields, Expand: lq.Expand}
		if op.Action == BatchList {
			r.List = true
			r.Page, r.PerPage, r.Sort, r.Filter = lq.Page, lq.PerPage, lq.Sort, lq.Filter
			r.SkipTotal, r.CursorMode, r.Cursor = lq.SkipTotal, lq.CursorMode, lq.Cursor
		}
		return batchOpCmd{Read: r}, nil
	}
	return batchOpCmd{}, Errorf(KindBadRequest, "Unknown batch action %q", op.Action)
}

// batchShared is what a batch's creates share: the caller as actor, and
// the rule environment of creates in one collection whose rules read
// nothing of the request but the method and context (the usual case: the
// same environment for a hundred entries, built once).
type batchShared struct {
	actor           *Actor
	ci              *Coll
	method, context string
	last            *RuleEnv
}

func (b *batchShared) env(e *Engine, p Principal, ci *Coll, now int64, body func() map[string]any) *RuleEnv {
	if u := ci.rulesUse; u.headers || u.query || u.body {
		return e.envFor(p, ci, body(), now)
	}
	if b.last != nil && b.ci == ci && b.method == p.Request.Method && b.context == p.Request.Context {
		return b.last
	}
	b.last = e.envFor(p, ci, nil, now)
	b.ci, b.method, b.context = ci, p.Request.Method, p.Request.Context
	return b.last
}
