package jsvm

import (
	"context"
	"errors"
	"fmt"

	"svcd/engine"
)

// Hooks run where the core intercepts record writes (engine.
// RecordInterceptor): before-hooks on the node that took the request,
// before the command is proposed, in order; after-hooks on that node
// once the write committed and this replica applied it, once, in the
// background. Nothing runs inside the state machine, so a hook runs once
// per write however many nodes apply it.

// interceptor is the module as the core's record interceptor.
type interceptor struct{ m *Module }

// beforeEvent and afterEvent name the events of a write kind.
var (
	beforeEvent = map[string]string{engine.EvRecordCreate: BeforeCreate, engine.EvRecordUpdate: BeforeUpdate, engine.EvRecordDelete: BeforeDelete}
	afterEvent  = map[string]string{engine.EvRecordCreate: AfterCreate, engine.EvRecordUpdate: AfterUpdate, engine.EvRecordDelete: AfterDelete}
)

func (ic interceptor) Intercepts(ci *engine.Coll, kind string) bool {
	s := ic.m.set.Load()
	return len(s.hooksFor(ci.Name, beforeEvent[kind])) > 0 || len(s.hooksFor(ci.Name, afterEvent[kind])) > 0
}

// errTooDeep refuses a write made by code nested deeper than the cap.
func errTooDeep(max int) error {
	return &engine.Error{Kind: engine.KindValidation,
		Message: fmt.Sprintf("Hooks nest too deep: a hook's write would run hooks more than %d levels down", max),
		Details: map[string]any{"depth": max}}
}

// BeforeRecordWrite runs the before-hooks of the write in order, each on
// the record the previous one left, and sets w.Body to what they made.
func (ic interceptor) BeforeRecordWrite(ctx context.Context, w *engine.InterceptedWrite) error {
	m := ic.m
	if depthOf(ctx) >= m.depth {
		return errTooDeep(m.depth)
	}
	hooks := m.set.Load().hooksFor(w.Coll.Name, beforeEvent[w.Kind])
	st := &hookState{w: w}
	if w.Kind != engine.EvRecordCreate {
		existing, err := m.readRecord(ctx, w.Coll.Name, w.ID)
		if err != nil || existing == nil {
			// A record that is not there: the write answers for itself.
			return err
		}
		st.existing = existing
	}
	w.Keep = st
	if len(hooks) == 0 {
		return nil
	}
	record := st.startRecord()
	for _, h := range hooks {
		out, err := m.runHook(ctx, h, w, record, st.existing)
		if err != nil {
			return hookError(h, err)
		}
		if out != nil {
			record = out
		}
	}
	st.finish(record)
	return nil
}

// AfterRecordWrite reads the record as it was written and runs the
// after-hooks in the background, in order. Their failures are logged
// with the hook's id; the write stands.
func (ic interceptor) AfterRecordWrite(ctx context.Context, w *engine.InterceptedWrite) {
	m := ic.m
	hooks := m.set.Load().hooksFor(w.Coll.Name, afterEvent[w.Kind])
	if len(hooks) == 0 {
		return
	}
	st, _ := w.Keep.(*hookState)
	var existing map[string]any
	if st != nil {
		existing = st.existing
	}
	// The write stands whatever the client does now: its after-hooks run
	// even when the request's context ends.
	bg := context.WithoutCancel(ctx)
	record := existing
	if w.Kind != engine.EvRecordDelete {
		rec, err := m.readRecord(bg, w.Coll.Name, w.ID)
		if err != nil {
			m.log.Warn("jsvm: after-hooks not run: the record could not be read", "collection", w.Coll.Name, "id", w.ID, "err", err)
			return
		}
		record = rec
	}
	if record == nil {
		return // deleted again before its after-hooks could read it
	}
	go func() {
		m.after <- struct{}{}
		defer func() { <-m.after }()
		for _, h := range hooks {
			if _, err := m.runHook(bg, h, w, cloneRecord(record), existing); err != nil {
				m.log.Warn("jsvm: after-hook failed", "hook", h.ID, "event", h.Event, "collection", w.Coll.Name, "id", w.ID, "err", err)
			}
		}
	}()
}

// readRecord is record id of collection name as the system reads it
// (nil when it does not exist).
func (m *Module) readRecord(ctx context.Context, name, id string) (map[string]any, error) {
	rec, err := m.core.Records().GetRecord(ctx, engine.SystemPrincipal(""), name, id, "", "")
	if errors.Is(err, engine.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(rec.JSON)
	if err != nil {
		return nil, err
	}
	obj, _ := v.(map[string]any)
	return obj, nil
}
