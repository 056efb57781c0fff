package pbcompat

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/schema"
)

// mountRecords serves PocketBase's record CRUD (pb:apis/record_crud.go):
// the same engine calls as /api/v1's record routes, PocketBase's shapes.
func mountRecords(r chi.Router, d *Deps) {
	base := "/api/collections/{collection}/records"
	r.Get(base, d.listRecords)
	r.Get(base+"/", d.listRecords)
	r.Post(base, d.createRecord)
	r.Post(base+"/", d.createRecord)
	r.Get(base+"/{id}", d.getRecord)
	r.Patch(base+"/{id}", d.updateRecord)
	r.Delete(base+"/{id}", d.deleteRecord)
}

// recordColl resolves the collection of a record route and checks an API
// token's scopes on it; an unknown collection is a 404.
func (d *Deps) recordColl(w http.ResponseWriter, r *http.Request, write bool) (*schema.Collection, bool) {
	c, err := d.Coll(chi.URLParam(r, "collection"))
	if err != nil || c == nil {
		WriteError(w, r, NewError(http.StatusNotFound, "", nil))
		return nil, false
	}
	if d.RecordScope != nil && !d.RecordScope(Principal(r), c.Name, write) {
		WriteError(w, r, engine.ErrInsufficientScope)
		return nil, false
	}
	return c, true
}

func (d *Deps) listRecords(w http.ResponseWriter, r *http.Request) {
	c, ok := d.recordColl(w, r, false)
	if !ok {
		return
	}
	lq, e := d.listQuery(r, c)
	if e != nil {
		WriteError(w, r, e)
		return
	}
	p := d.recordCaller(r)
	list, err := d.Records.ListRecords(r.Context(), p, c.Name, lq)
	if err != nil {
		WriteError(w, r, readError(err))
		return
	}
	if list.FilterProblem != "" {
		// PocketBase refuses a filter it cannot use (svcd's /api/v1
		// drops it and says so in a header).
		WriteError(w, r, invalidFilter(list.FilterProblem))
		return
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(list.Data, &raws); err != nil {
		WriteError(w, r, err)
		return
	}
	out := List{Items: make([]map[string]any, 0, len(raws)), Page: list.Page, PerPage: list.PerPage,
		TotalItems: list.TotalItems, TotalPages: list.TotalPages}
	if lq.SkipTotal {
		out.TotalItems, out.TotalPages = -1, -1
	}
	ex := excerpts(r.URL.Query().Get("fields"))
	for _, raw := range raws {
		m, err := RecordOut(d.Catalog, c, raw, p)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		applyExcerpts(m, ex)
		out.Items = append(out.Items, m)
	}
	WriteJSON(w, http.StatusOK, out)
}

func (d *Deps) getRecord(w http.ResponseWriter, r *http.Request) {
	c, ok := d.recordColl(w, r, false)
	if !ok {
		return
	}
	p := d.recordCaller(r)
	q := r.URL.Query()
	rec, err := d.Records.GetRecord(r.Context(), p, c.Name, chi.URLParam(r, "id"), Fields(q.Get("fields")), q.Get("expand"))
	if err != nil {
		WriteError(w, r, readError(err))
		return
	}
	d.writeRecord(w, r, http.StatusOK, c, rec, p)
}

func (d *Deps) createRecord(w http.ResponseWriter, r *http.Request) {
	c, ok := d.recordColl(w, r, true)
	if !ok {
		return
	}
	if isMultipart(r) {
		d.createMultipart(w, r, c.Name)
		return
	}
	body, ok := d.recordBody(w, r, c, MsgFailedCreate)
	if !ok {
		return
	}
	p := d.recordCaller(r)
	rec, idx, err := d.Records.CreateRecord(r.Context(), p, c.Name, body)
	SetIndex(w, idx)
	if err != nil {
		WriteError(w, r, WriteFailure(err, MsgFailedCreate))
		return
	}
	d.writeWritten(w, r, http.StatusOK, c, rec, p)
}

func (d *Deps) updateRecord(w http.ResponseWriter, r *http.Request) {
	c, ok := d.recordColl(w, r, true)
	if !ok {
		return
	}
	id := chi.URLParam(r, "id")
	if isMultipart(r) {
		d.updateMultipart(w, r, c.Name, id)
		return
	}
	body, ok := d.recordBody(w, r, c, MsgFailedUpdate)
	if !ok {
		return
	}
	p := d.recordCaller(r)
	rec, idx, err := d.Records.UpdateRecord(r.Context(), p, c.Name, id, body, r.Header.Get("If-Match"))
	SetIndex(w, idx)
	if err != nil {
		WriteError(w, r, WriteFailure(err, MsgFailedUpdate))
		return
	}
	d.writeWritten(w, r, http.StatusOK, c, rec, p)
}

func (d *Deps) deleteRecord(w http.ResponseWriter, r *http.Request) {
	c, ok := d.recordColl(w, r, true)
	if !ok {
		return
	}
	p := d.recordCaller(r)
	idx, err := d.Records.DeleteRecord(r.Context(), p, c.Name, chi.URLParam(r, "id"), r.Header.Get("If-Match"))
	SetIndex(w, idx)
	if err != nil {
		e := engine.AsError(err)
		if e != nil && e.Kind == engine.KindConflict && !errors.Is(e, engine.ErrSchemaMoved) {
			WriteError(w, r, NewError(http.StatusBadRequest, MsgFailedDelete, nil))
			return
		}
		WriteError(w, r, WriteFailure(err, ""))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// writeWritten answers a created or updated record; with expand or fields
// asked, the record is read again as the caller sees it (when the caller
// may not view it, the written record is answered as is).
func (d *Deps) writeWritten(w http.ResponseWriter, r *http.Request, status int, c *schema.Collection, rec *engine.Record, p engine.Principal) {
	q := r.URL.Query()
	if q.Get("expand") != "" || q.Get("fields") != "" {
		var id struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(rec.JSON, &id) == nil && id.ID != "" {
			if again, err := d.Records.GetRecord(r.Context(), p, c.Name, id.ID, Fields(q.Get("fields")), q.Get("expand")); err == nil {
				rec = again
			}
		}
	}
	d.writeRecord(w, r, status, c, rec, p)
}

func (d *Deps) writeRecord(w http.ResponseWriter, r *http.Request, status int, c *schema.Collection, rec *engine.Record, p engine.Principal) {
	m, err := RecordOut(d.Catalog, c, rec.JSON, p)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	applyExcerpts(m, excerpts(r.URL.Query().Get("fields")))
	if rec.ETag != "" {
		w.Header().Set("ETag", rec.ETag)
	}
	WriteJSON(w, status, m)
}

// readError is a read's error as PocketBase answers it: a record the view
// rule hides is not found (svcd already answers 404 there); a null rule
// is "Only superusers".
func readError(err error) error {
	return FromEngine(err)
}

// WriteFailure is a create, update or delete error as PocketBase answers
// it (pb:apis/record_crud.go): validation is 400 with failed (for example
// "Failed to create record.") and the fields in data; a create rule that
// refuses is the same 400; an update or delete rule that refuses is a
// 404 (PocketBase looks the record up through the rule); a null rule is
// 403 "Only superusers can perform this action.".
func WriteFailure(err error, failed string) error {
	e := engine.AsError(err)
	if e == nil {
		return err
	}
	switch {
	case errors.Is(e, engine.ErrAdminOnly):
		return NewError(http.StatusForbidden, MsgSuperuserOnly, nil)
	case e.Kind == engine.KindValidation && failed != "":
		return NewError(http.StatusBadRequest, failed, fieldData(e.Details))
	case e.Kind == engine.KindForbidden && failed == MsgFailedCreate:
		return NewError(http.StatusBadRequest, failed, nil)
	case e.Kind == engine.KindForbidden:
		return NewError(http.StatusNotFound, "", nil)
	}
	return FromEngine(err)
}

// SetIndex sets X-Svc-Index, the Raft index of a write, as /api/v1 does
// (a client may wait for it on another node: docs/api.md "Consistency").
func SetIndex(w http.ResponseWriter, idx uint64) {
	if idx > 0 {
		w.Header().Set("X-Svc-Index", strconv.FormatUint(idx, 10))
	}
}

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}
