package engine

import "context"

// Record writes can be intercepted before they are proposed and after they
// committed: the hooks admins write in JavaScript (engine/jsvm) are such
// an interceptor. The core declares the interface and calls it from every
// entry point that writes records on a caller's behalf: the record
// routes (CreateRecord, UpdateRecord, DeleteRecord, and so account
// registration), batches, and the modules' own entry points through
// BeforeWrite and AfterWrite (multipart writes in engine/files, CSV
// imports in engine/csv). Writes made inside an apply (cascades, account
// flows that change system columns) are not entry points: nothing
// intercepts them, since nothing may run code there.
//
// A write the interceptor refuses is never proposed. One it changes is
// validated as if the caller had sent the changed body, so a change can
// never store what the normal path would refuse.

// RecordInterceptor runs code around record writes (SetRecordInterceptor).
type RecordInterceptor interface {
	// Intercepts reports whether a write of kind (EvRecordCreate,
	// EvRecordUpdate or EvRecordDelete) to ci has anything to run, before
	// or after. When it is false the core calls neither method, so a
	// collection without hooks pays one call.
	Intercepts(ci *Coll, kind string) bool
	// BeforeRecordWrite runs before the write is validated and proposed,
	// once per write (a proposal retried on a moved schema does not run
	// it again). It may change w.Body, which is then what is validated
	// and stored. An error refuses the write: a domain *Error is the
	// caller's answer.
	BeforeRecordWrite(ctx context.Context, w *InterceptedWrite) error
	// AfterRecordWrite runs once the write committed and this node
	// applied it. It cannot fail the write and must not hold the caller
	// up: lasting work is its own to start and end.
	AfterRecordWrite(ctx context.Context, w *InterceptedWrite)
}

// InterceptedWrite is one record write as the interceptor sees it.
type InterceptedWrite struct {
	Kind string // EvRecordCreate, EvRecordUpdate or EvRecordDelete
	Coll *Coll
	// Principal is the caller the write is made for.
	Principal Principal
	// ID is the record's id: the target of an update or delete; for a
	// create, the id once it is known (AfterRecordWrite), or the one the
	// body names.
	ID string
	// Body is a create's or an update's decoded body (numbers as
	// json.Number); nil for a delete. BeforeRecordWrite may replace it or
	// change it in place.
	Body map[string]any
	// Keep is the interceptor's own: what BeforeRecordWrite leaves there
	// reaches AfterRecordWrite (the record as it was before the write).
	Keep any
}

// SetRecordInterceptor registers the interceptor of record writes (one
// per engine; the composition root sets it while wiring).
func (e *Engine) SetRecordInterceptor(i RecordInterceptor) {
	e.reg.mustOpen("record interceptor")
	if e.reg.interceptor != nil {
		panic("engine: record interceptor set twice")
	}
	e.reg.interceptor = i
}

// BeforeWrite runs the interceptor before a write of kind by p to record
// id (update, delete) of collection name, with body (create, update).
// It answers nil, and no error, when nothing intercepts the write, or
// when the caller may not make it at all (the entry point's own checks
// answer that, as without an interceptor). Call it once per write,
// before the proposal's retry loop, and use w.Body afterwards.
func (rs *Records) BeforeWrite(ctx context.Context, p Principal, kind, name, id string, body map[string]any) (*InterceptedWrite, error) {
	ic := rs.e.reg.interceptor
	if ic == nil {
		return nil, nil
	}
	ci, err := rs.writable(name)
	if err != nil {
		return nil, nil
	}
	admin, err := writeRights(p, ci)
	if err != nil {
		return nil, nil
	}
	switch kind {
	case EvRecordCreate:
		if !admin && ci.CreateRule == nil {
			return nil, nil
		}
	case EvRecordUpdate:
		if preWriteError(ci, ci.UpdateRule, admin) != nil {
			return nil, nil
		}
	case EvRecordDelete:
		if preWriteError(ci, ci.DeleteRule, admin) != nil {
			return nil, nil
		}
	}
	if !ic.Intercepts(ci, kind) {
		return nil, nil
	}
	if id == "" && kind == EvRecordCreate {
		id, _ = body["id"].(string)
	}
	w := &InterceptedWrite{Kind: kind, Coll: ci, Principal: p, ID: id, Body: body}
	if err := ic.BeforeRecordWrite(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// AfterWrite runs the interceptor once w committed; id is the record's
// id (a create's is known only now). A nil w does nothing.
func (rs *Records) AfterWrite(ctx context.Context, w *InterceptedWrite, id string) {
	if w == nil {
		return
	}
	w.ID = id
	rs.e.reg.interceptor.AfterRecordWrite(ctx, w)
}

// bodyOf is w's body when w is set, else in.
func bodyOf(w *InterceptedWrite, in map[string]any) map[string]any {
	if w == nil {
		return in
	}
	return w.Body
}
