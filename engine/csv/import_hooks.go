package csv

import (
	"context"
	"maps"

	"svcd/engine"
)

// Hooks on imported rows: every row is a record create as the importing
// admin makes it, so the interceptor (engine/jsvm's before-hooks) sees
// each valid row before its chunk is proposed and may change or refuse
// it; a refused row fails with the hook's message, like a row that does
// not validate. After-hooks run for the rows the chunk created, once it
// committed. A chunk proposed again (a schema change raced it) does not
// run the hooks of its rows again.

// hookedRow is what the before-hooks made of one row.
type hookedRow struct {
	w    *engine.InterceptedWrite // nil: nothing intercepted the row
	body map[string]any
	fail map[string]any // the row's error when a hook refused it
}

// rowHooks runs the before-hooks of the rows of one chunk, once per row.
type rowHooks struct {
	im   *csvImporter
	done map[int]hookedRow
}

// before returns the body to validate for row (in when nothing
// intercepts), or the row's error.
func (h *rowHooks) before(ctx context.Context, row int, in map[string]any) (map[string]any, map[string]any) {
	if hr, ok := h.done[row]; ok {
		return hr.body, hr.fail
	}
	w, err := h.im.m.core.Records().BeforeWrite(ctx, h.im.p, engine.EvRecordCreate, h.im.name, "", in)
	hr := hookedRow{w: w, body: in}
	switch {
	case err != nil:
		hr.fail = hookFailure(err)
	case w != nil:
		hr.body = w.Body
	}
	if h.done == nil {
		h.done = map[int]hookedRow{}
	}
	h.done[row] = hr
	return hr.body, hr.fail
}

// after runs the after-hooks of the rows created.
func (h *rowHooks) after(ctx context.Context, created []importRow, failed []RowError) {
	if len(h.done) == 0 {
		return
	}
	bad := make(map[int]bool, len(failed))
	for _, f := range failed {
		bad[f.Row] = true
	}
	for _, r := range created {
		if hr := h.done[r.Row]; hr.w != nil && !bad[r.Row] {
			h.im.m.core.Records().AfterWrite(ctx, hr.w, r.Create.ID())
		}
	}
}

// hookFailure is a row's details for a refusal: the error's details
// (the hook's id) and its message under "_row".
func hookFailure(err error) map[string]any {
	de := engine.AsError(err)
	if de == nil {
		return csvRowError("%v", err)
	}
	d := maps.Clone(de.Details)
	if d == nil {
		d = map[string]any{}
	}
	d[csvRowMessage] = de.Message
	return d
}
