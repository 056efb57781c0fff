package jsvm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/dop251/goja"

	"svcd/engine"
	"svcd/engine/schema"
)

// What a hook sees and what it changes.
//
// ctx.record is the record the write would leave: a create's body, an
// update's current record with the body's changes applied, a delete's
// current record. ctx.existing is the current record (update and delete;
// null for a create). Both are as an admin reads them (hidden fields
// included); passwords are never in them (password fields,
// oldPassword and passwordConfirm stay out of reach and are stored as
// sent).
//
// What a before-hook leaves in ctx.record is what is stored: for a
// create, its members are the body; for an update, the members the
// client sent and those the hook changed are. Either is validated like a
// client's body. id, collectionId, collectionName, created, updated and
// expand are not taken from it (a create may set id, as a client may).

// hookState carries a write from its before-hooks to its after-hooks.
type hookState struct {
	w        *engine.InterceptedWrite
	existing map[string]any
	// hidden are the members of the body hooks do not see (passwords).
	hidden map[string]any
}

// readOnlyMembers are members of a rendered record a hook cannot set.
var readOnlyMembers = []string{"collectionId", "collectionName", "created", "updated", "expand"}

// startRecord is the record the first before-hook sees.
func (st *hookState) startRecord() map[string]any {
	st.hidden = map[string]any{}
	for k, v := range st.w.Body {
		if secretMember(st.w.Coll, k) {
			st.hidden[k] = v
		}
	}
	var rec map[string]any
	switch st.w.Kind {
	case engine.EvRecordCreate:
		rec = maps.Clone(st.w.Body)
	case engine.EvRecordUpdate:
		rec = maps.Clone(st.existing)
		maps.Copy(rec, st.w.Body)
	default:
		rec = maps.Clone(st.existing)
	}
	if rec == nil {
		rec = map[string]any{}
	}
	for k := range st.hidden {
		delete(rec, k)
	}
	return rec
}

// finish sets the write's body from the record the last hook left.
func (st *hookState) finish(rec map[string]any) {
	switch st.w.Kind {
	case engine.EvRecordCreate:
		body := maps.Clone(rec)
		for _, k := range readOnlyMembers {
			delete(body, k)
		}
		maps.Copy(body, st.hidden)
		st.w.Body = body
	case engine.EvRecordUpdate:
		body := map[string]any{}
		for k, v := range rec {
			_, sent := st.w.Body[k]
			if sent || !sameJSON(v, st.existing[k]) {
				body[k] = v
			}
		}
		for _, k := range append(readOnlyMembers, "id") {
			delete(body, k)
		}
		maps.Copy(body, st.hidden)
		st.w.Body = body
	}
}

// secretMember reports a body member hooks do not see: a password
// field's value, or the account update's oldPassword and
// passwordConfirm.
func secretMember(ci *engine.Coll, k string) bool {
	if k == "oldPassword" || k == "passwordConfirm" {
		return true
	}
	for _, f := range ci.RowFields() {
		if f.Name == k {
			return f.Type == schema.FieldPassword
		}
	}
	return false
}

// sameJSON reports whether two decoded JSON values are equal.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// cloneRecord is a copy of rec an after-hook may change freely.
func cloneRecord(rec map[string]any) map[string]any {
	raw, _ := json.Marshal(rec)
	v, _ := decodeJSON(raw)
	out, _ := v.(map[string]any)
	return out
}

// runHook runs one hook on record and returns the record it left.
func (m *Module) runHook(ctx context.Context, h *Hook, w *engine.InterceptedWrite, record, existing map[string]any) (map[string]any, error) {
	started := time.Now()
	defer m.logRun("hook", h.ID, started)
	var recVal goja.Value
	out, err := m.run(ctx, runSpec{
		kind: "hook", id: h.ID, code: h.Code, p: w.Principal,
		vars: func(inv *invocation) map[string]any {
			recVal = inv.b.fromGo(record)
			return map[string]any{
				"record":     recVal,
				"existing":   inv.b.fromGo(nilMap(existing)),
				"auth":       inv.b.fromGo(nilMap(authValue(w.Principal))),
				"event":      h.Event,
				"collection": w.Coll.Name,
			}
		},
		finish: func(inv *invocation, _ goja.Value) (any, error) {
			return inv.b.toObject(recVal, "ctx.record")
		},
	})
	if err != nil {
		return nil, err
	}
	rec, _ := out.(map[string]any)
	if rec == nil {
		return nil, errors.New("ctx.record is no longer an object")
	}
	return rec, nil
}

// nilMap is m, or an untyped nil for a nil map (null to code).
func nilMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// hookError is a before-hook's failure as the write's answer: a 422 with
// the hook's message (or the status helpers.abort named), naming the
// hook in details.
func hookError(h *Hook, err error) error {
	details := map[string]any{"hook": h.ID}
	var te *ThrowError
	switch {
	case errors.As(err, &te):
		kind := engine.KindValidation
		status, d := thrownStatus(te)
		if te.Abort && status >= 400 && status < 500 {
			if k, ok := statusKind(status); ok {
				kind = k
			}
		}
		for k, v := range d {
			if k != "hook" {
				details[k] = v
			}
		}
		return &engine.Error{Kind: kind, Message: te.Message, Details: details}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var ce *CompileError
	var tm *TimeoutError
	if errors.As(err, &ce) || errors.As(err, &tm) || errors.Is(err, ErrNeverSettles) {
		return &engine.Error{Kind: engine.KindValidation, Message: "hook " + h.ID + ": " + err.Error(), Details: details}
	}
	if de := engine.AsError(err); de != nil {
		return de
	}
	return &engine.Error{Kind: engine.KindValidation, Message: "hook " + h.ID + ": " + err.Error(), Details: details}
}
