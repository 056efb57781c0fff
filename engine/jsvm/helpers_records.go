package jsvm

import (
	"errors"
	"strconv"

	"github.com/dop251/goja"

	"svcd/engine"
)

// Records: find and query read this replica as the helpers' principal
// (what the REST API would show it); records.create, update and delete
// are record writes like a client's, through the log, with hooks (to the
// depth cap) and the rules of the principal.

func (h *helperSet) records(o *goja.Object) {
	set(o, "find", h.find)
	set(o, "query", h.query)
	ns := h.namespace(o, "records")
	ns.set("find", h.find)
	ns.set("query", h.query)
	ns.set("create", h.create)
	ns.set("update", h.update)
	ns.set("delete", h.remove)
}

// find(collection, id, {fields, expand}) is the record, or null when it
// does not exist or the principal may not view it.
func (h *helperSet) find(call goja.FunctionCall) goja.Value {
	coll := h.str(call, 0, "helpers.find", "the collection")
	id := h.str(call, 1, "helpers.find", "the id")
	o := h.opts(call, 2, "helpers.find")
	rec, err := h.inv.m.core.Records().GetRecord(h.inv.ctx, h.p, coll, id, optString(o, "fields"), optString(o, "expand"))
	if errors.Is(err, engine.ErrNotFound) {
		return goja.Null()
	}
	if err != nil {
		h.inv.throw("helpers.find", err)
	}
	h.inv.charge("helpers.find", len(rec.JSON))
	return h.inv.b.fromJSON(rec.JSON)
}

// query(collection, {filter, sort, page, perPage, fields, expand,
// skipTotal}) is {data, totalItems, page, perPage, totalPages}. A filter
// that does not parse throws (a client's list would drop it).
func (h *helperSet) query(call goja.FunctionCall) goja.Value {
	coll := h.str(call, 0, "helpers.query", "the collection")
	o := h.opts(call, 1, "helpers.query")
	q := engine.ListQuery{
		Page: int(optInt(o, "page", 1)), PerPage: int(optInt(o, "perPage", defaultQueryPerPage)),
		Sort: optString(o, "sort"), Filter: optString(o, "filter"), Fields: optString(o, "fields"),
		Expand: optString(o, "expand"), SkipTotal: optBool(o, "skipTotal", false),
	}
	list, err := h.inv.m.core.Records().ListRecords(h.inv.ctx, h.p, coll, q)
	if err != nil {
		h.inv.throw("helpers.query", err)
	}
	if list.FilterProblem != "" {
		h.inv.fail("helpers.query: the filter does not apply: %s", list.FilterProblem)
	}
	h.inv.charge("helpers.query", len(list.Data))
	buf := make([]byte, 0, len(list.Data)+96)
	buf = append(buf, `{"data":`...)
	buf = append(buf, list.Data...)
	buf = append(buf, `,"totalItems":`...)
	buf = strconv.AppendInt(buf, int64(list.TotalItems), 10)
	buf = append(buf, `,"page":`...)
	buf = strconv.AppendInt(buf, int64(list.Page), 10)
	buf = append(buf, `,"perPage":`...)
	buf = strconv.AppendInt(buf, int64(list.PerPage), 10)
	buf = append(buf, `,"totalPages":`...)
	buf = strconv.AppendInt(buf, int64(list.TotalPages), 10)
	buf = append(buf, '}')
	return h.inv.b.fromJSON(buf)
}

// create(collection, data) creates a record and returns it.
func (h *helperSet) create(call goja.FunctionCall) goja.Value {
	coll := h.str(call, 0, "helpers.records.create", "the collection")
	body := h.body(call, 1, "helpers.records.create")
	rec, _, err := h.inv.m.core.Records().CreateRecord(h.inv.ctx, h.p, coll, body)
	h.audited("records.create", coll, recordID(rec), 201, err)
	if err != nil {
		h.inv.throw("helpers.records.create", err)
	}
	return h.inv.b.fromJSON(rec.JSON)
}

// update(collection, id, data, {ifMatch}) changes a record and returns
// it.
func (h *helperSet) update(call goja.FunctionCall) goja.Value {
	coll := h.str(call, 0, "helpers.records.update", "the collection")
	id := h.str(call, 1, "helpers.records.update", "the id")
	body := h.body(call, 2, "helpers.records.update")
	o := h.opts(call, 3, "helpers.records.update")
	rec, _, err := h.inv.m.core.Records().UpdateRecord(h.inv.ctx, h.p, coll, id, body, optString(o, "ifMatch"))
	h.audited("records.update", coll, id, 200, err)
	if err != nil {
		h.inv.throw("helpers.records.update", err)
	}
	return h.inv.b.fromJSON(rec.JSON)
}

// delete(collection, id, {ifMatch}) deletes a record; true.
func (h *helperSet) remove(call goja.FunctionCall) goja.Value {
	coll := h.str(call, 0, "helpers.records.delete", "the collection")
	id := h.str(call, 1, "helpers.records.delete", "the id")
	o := h.opts(call, 2, "helpers.records.delete")
	_, err := h.inv.m.core.Records().DeleteRecord(h.inv.ctx, h.p, coll, id, optString(o, "ifMatch"))
	h.audited("records.delete", coll, id, 204, err)
	if err != nil {
		h.inv.throw("helpers.records.delete", err)
	}
	return h.inv.rt.ToValue(true)
}

// body is argument i as a JSON object body.
func (h *helperSet) body(call goja.FunctionCall, i int, helper string) []byte {
	v := call.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return []byte("{}")
	}
	if _, ok := v.(*goja.Object); !ok {
		h.inv.fail("%s: the data must be an object", helper)
	}
	raw, ok, err := h.inv.b.toJSON(v)
	if err != nil {
		h.inv.throw(helper, err)
	}
	if !ok || len(raw) == 0 || raw[0] != '{' {
		h.inv.fail("%s: the data must be an object", helper)
	}
	return raw
}

// recordID is the id of a record answer ("" when none).
func recordID(rec *engine.Record) string {
	if rec == nil {
		return ""
	}
	var v struct {
		ID string `json:"id"`
	}
	_ = jsonUnmarshal(rec.JSON, &v)
	return v.ID
}
