package pbcompat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/internal/pbschema"
)

// CollectionAdmin is what the collection routes need: the method set of
// api.Collections they use.
type CollectionAdmin interface {
	Collections() []*schema.Collection
	Collection(nameOrID string) (*schema.Collection, error)
	CreateCollection(ctx context.Context, body []byte) (*schema.Collection, uint64, error)
	UpdateCollection(ctx context.Context, nameOrID string, body []byte) (*schema.Collection, uint64, error)
	DeleteCollection(ctx context.Context, nameOrID string) (uint64, error)
}

// IndexAdmin manages svcd's single-field indexes. The collection routes
// use it when Deps.Collections also implements it (svcd's engine.Schema
// does); without it, plain indexes of a PocketBase body are reported in
// the note header and not created.
type IndexAdmin interface {
	Indexes(ctx context.Context, coll string) ([]engine.Index, error)
	CreateIndex(ctx context.Context, coll, field string, unique bool) (*engine.Index, uint64, error)
}

// NoteHeader carries, one value each, what a collection write could not
// translate exactly (pbschema's problems); PocketBase has no such header.
const NoteHeader = "X-Svc-Compat-Note"

// Least admin roles of the collection routes (the same as
// /api/v1/admin/collections: viewers read, developers write).
const (
	collReadRole  = engine.RoleViewer
	collWriteRole = engine.RoleDeveloper
)

// mountCollections serves PocketBase's collection routes
// (pb:apis/collection.go), superusers only, on svcd's schema: the
// collection JSON is translated both ways by internal/pbschema.
func mountCollections(r chi.Router, d *Deps) {
	if d.Collections == nil {
		return
	}
	r.With(RequireSuperuser, requireRole(collReadRole)).Get("/api/collections", d.listCollections)
	r.With(RequireSuperuser, requireRole(collReadRole)).Get("/api/collections/", d.listCollections)
	r.With(RequireSuperuser, requireRole(collWriteRole)).Post("/api/collections", d.createCollection)
	r.With(RequireSuperuser, requireRole(collWriteRole)).Post("/api/collections/", d.createCollection)
	r.With(RequireSuperuser, requireRole(collReadRole)).Get("/api/collections/{collection}", d.getCollection)
	r.With(RequireSuperuser, requireRole(collWriteRole)).Patch("/api/collections/{collection}", d.updateCollection)
	r.With(RequireSuperuser, requireRole(collWriteRole)).Delete("/api/collections/{collection}", d.deleteCollection)
}

// requireRole answers 403 to an admin below role.
func requireRole(role engine.Role) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if Principal(r).Role < role {
				WriteError(w, r, NewError(http.StatusForbidden, "", nil))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// collLookup resolves relation targets and @collection names of a
// PocketBase body to svcd names (aliases included).
type collLookup struct{ d *Deps }

func (l collLookup) SvcdName(s string) (string, bool) {
	if s == pbschema.SuperusersID || s == "_superusers" {
		return "", false
	}
	c, err := l.d.Coll(s)
	if err != nil || c == nil {
		return "", false
	}
	return c.Name, true
}

// pbCollection answers c in PocketBase's collection JSON.
func (d *Deps) pbCollection(ctx context.Context, c *schema.Collection) map[string]any {
	b, _ := json.Marshal(c)
	var st pbschema.Stored
	_ = json.Unmarshal(b, &st)
	var idx []pbschema.Index
	if ia, ok := d.Collections.(IndexAdmin); ok {
		list, _ := ia.Indexes(ctx, c.Name)
		for _, ix := range list {
			idx = append(idx, pbschema.Index{Field: ix.Field, Unique: ix.Unique})
		}
	}
	return pbschema.Reverse(st, idx)
}

// listCollections answers PocketBase's paginated list. It pages svcd's
// list in memory; sort takes name, created, updated or type (with "-"),
// filter takes equality terms on name, type or id joined with &&.
func (d *Deps) listCollections(w http.ResponseWriter, r *http.Request) {
	all := d.Collections.Collections()
	q := r.URL.Query()
	match, err := collFilter(q.Get("filter"))
	if err != nil {
		WriteError(w, r, NewError(http.StatusBadRequest, "", nil))
		return
	}
	var items []map[string]any
	for _, c := range all {
		if strings.HasPrefix(c.Name, "svc_") || !match(c) {
			continue
		}
		items = append(items, d.pbCollection(r.Context(), c))
	}
	sortCollections(items, q.Get("sort"))
	page, perPage := atoiOr(q.Get("page"), 1), atoiOr(q.Get("perPage"), 30)
	if page < 1 {
		page = 1
	}
	if perPage < 1 {
		perPage = 30
	}
	perPage = min(perPage, 1000)
	total := len(items)
	from := min((page-1)*perPage, total)
	to := min(from+perPage, total)
	out := map[string]any{"page": page, "perPage": perPage, "totalItems": total, "totalPages": (total + perPage - 1) / perPage, "items": nonNilItems(items[from:to])}
	if s := q.Get("skipTotal"); s == "1" || s == "true" {
		out["totalItems"], out["totalPages"] = -1, -1
	}
	WriteJSON(w, http.StatusOK, out)
}

func nonNilItems(items []map[string]any) []map[string]any {
	if items == nil {
		return []map[string]any{}
	}
	return items
}

// sortCollections orders PocketBase collection JSONs by a sort
// parameter ("-created,name"); the default is created then name.
func sortCollections(items []map[string]any, spec string) {
	if strings.TrimSpace(spec) == "" {
		spec = "created,name"
	}
	keys := strings.Split(spec, ",")
	sort.SliceStable(items, func(i, j int) bool {
		for _, k := range keys {
			k = strings.TrimSpace(k)
			desc := strings.HasPrefix(k, "-")
			k = strings.TrimPrefix(strings.TrimPrefix(k, "-"), "+")
			a, b := asString(items[i][k]), asString(items[j][k])
			if a == b {
				continue
			}
			return (a < b) != desc
		}
		return false
	})
}

func asString(v any) string { s, _ := v.(string); return s }

// collFilter understands the filters PocketBase's dashboard and SDK
// users send on collections: `name = "x"` (also type, id) terms joined
// with &&. Anything else is an error (400).
func collFilter(f string) (func(*schema.Collection) bool, error) {
	f = strings.TrimSpace(f)
	if f == "" {
		return func(*schema.Collection) bool { return true }, nil
	}
	type term struct{ key, val string }
	var terms []term
	for _, part := range strings.Split(f, "&&") {
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || strings.HasSuffix(k, "!") || len(v) < 2 || (v[0] != '"' && v[0] != '\'') || v[len(v)-1] != v[0] {
			return nil, NewError(http.StatusBadRequest, "", nil)
		}
		switch k {
		case "name", "type", "id":
		default:
			return nil, NewError(http.StatusBadRequest, "", nil)
		}
		terms = append(terms, term{k, v[1 : len(v)-1]})
	}
	return func(c *schema.Collection) bool {
		for _, t := range terms {
			got := map[string]string{"name": c.Name, "type": c.Type, "id": c.ID}[t.key]
			if got != t.val {
				return false
			}
		}
		return true
	}, nil
}

func (d *Deps) getCollection(w http.ResponseWriter, r *http.Request) {
	c, err := d.Coll(chi.URLParam(r, "collection"))
	if err != nil || c == nil {
		WriteError(w, r, NewError(http.StatusNotFound, "", nil))
		return
	}
	WriteJSON(w, http.StatusOK, d.pbCollection(r.Context(), c))
}

// readPBCollection reads a PocketBase collection body (JSON).
func (d *Deps) readPBCollection(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var raw []byte
	var err error
	if d.ReadBody != nil {
		raw, err = d.ReadBody(w, r)
	} else {
		raw, err = io.ReadAll(io.LimitReader(r.Body, 1<<20))
	}
	if err != nil {
		WriteError(w, r, err)
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		WriteError(w, r, NewError(http.StatusBadRequest, "", nil))
		return nil, false
	}
	return m, true
}

// translate turns a PocketBase collection body into svcd's JSON, with the
// problems as note headers. keep maps PocketBase field ids to the svcd
// field ids they name (an update keeps its fields, renames included).
func (d *Deps) translate(w http.ResponseWriter, r *http.Request, m map[string]any, failed string) (pbschema.Translated, []byte, bool) {
	raw, _ := json.Marshal(m)
	var pb pbschema.PBCollection
	if err := json.Unmarshal(raw, &pb); err != nil {
		WriteError(w, r, NewError(http.StatusBadRequest, failed, map[string]any{"fields": FieldError{Code: "validation_invalid_value", Message: "Invalid value."}}))
		return pbschema.Translated{}, nil, false
	}
	tr, problems, err := pbschema.Translate(pb, collLookup{d})
	if err != nil {
		WriteError(w, r, NewError(http.StatusBadRequest, failed, map[string]any{"name": FieldError{Code: "validation_invalid_value", Message: sentenize(capitalize(err.Error()))}}))
		return tr, nil, false
	}
	ids := map[string]string{}
	for _, f := range pb.Fields {
		if f.ID != "" {
			ids[tr.FieldNames[f.Name]] = f.ID
		}
	}
	for _, f := range tr.Fields {
		if id := ids[f.Name()]; id != "" {
			f["id"] = id
		}
	}
	for _, p := range problems {
		w.Header().Add(NoteHeader, p.String())
	}
	body, _ := json.Marshal(tr.Collection)
	return tr, body, true
}

// createIndexes creates the plain indexes a translation asked for.
func (d *Deps) createIndexes(w http.ResponseWriter, r *http.Request, coll string, want []pbschema.Index) {
	if len(want) == 0 {
		return
	}
	ia, ok := d.Collections.(IndexAdmin)
	if !ok {
		w.Header().Add(NoteHeader, "indexes: not created (no index service)")
		return
	}
	have, _ := ia.Indexes(r.Context(), coll)
	for _, ix := range want {
		exists := false
		for _, h := range have {
			exists = exists || (h.Field == ix.Field && h.Unique == ix.Unique)
		}
		if exists {
			continue
		}
		if _, _, err := ia.CreateIndex(r.Context(), coll, ix.Field, ix.Unique); err != nil {
			w.Header().Add(NoteHeader, "indexes: "+ix.Field+": "+err.Error())
		}
	}
}

// createCollection is PocketBase's POST /api/collections: 200 with the
// new collection's JSON.
func (d *Deps) createCollection(w http.ResponseWriter, r *http.Request) {
	m, ok := d.readPBCollection(w, r)
	if !ok {
		return
	}
	tr, body, ok := d.translate(w, r, m, "Failed to create collection.")
	if !ok {
		return
	}
	c, _, err := d.Collections.CreateCollection(r.Context(), body)
	if err != nil {
		WriteError(w, r, collWriteError(err, "Failed to create collection."))
		return
	}
	d.createIndexes(w, r, c.Name, tr.Indexes)
	WriteJSON(w, http.StatusOK, d.pbCollection(r.Context(), c))
}

// updateCollection is PocketBase's PATCH /api/collections/{c}: the body's
// members replace the collection's (as PocketBase's form does), the
// merged collection is translated and saved.
func (d *Deps) updateCollection(w http.ResponseWriter, r *http.Request) {
	c, err := d.Coll(chi.URLParam(r, "collection"))
	if err != nil || c == nil {
		WriteError(w, r, NewError(http.StatusNotFound, "", nil))
		return
	}
	m, ok := d.readPBCollection(w, r)
	if !ok {
		return
	}
	merged := d.pbCollection(r.Context(), c)
	for k, v := range m {
		merged[k] = v
	}
	if _, ok := m["type"]; !ok {
		merged["type"] = c.Type
	}
	// A body that changes one rule of the pair sets svcd's one view_rule.
	if lr, ok := m["listRule"]; ok {
		if _, both := m["viewRule"]; !both {
			merged["viewRule"] = lr
		}
	} else if vr, ok := m["viewRule"]; ok {
		merged["listRule"] = vr
	}
	tr, body, ok := d.translate(w, r, merged, "Failed to update collection.")
	if !ok {
		return
	}
	out, _, err := d.Collections.UpdateCollection(r.Context(), c.ID, body)
	if err != nil {
		WriteError(w, r, collWriteError(err, "Failed to update collection."))
		return
	}
	d.createIndexes(w, r, out.Name, tr.Indexes)
	WriteJSON(w, http.StatusOK, d.pbCollection(r.Context(), out))
}

// deleteCollection is PocketBase's DELETE /api/collections/{c}: 204.
func (d *Deps) deleteCollection(w http.ResponseWriter, r *http.Request) {
	c, err := d.Coll(chi.URLParam(r, "collection"))
	if err != nil || c == nil {
		WriteError(w, r, NewError(http.StatusNotFound, "", nil))
		return
	}
	if _, err := d.Collections.DeleteCollection(r.Context(), c.ID); err != nil {
		WriteError(w, r, collWriteError(err, "Failed to delete collection. Make sure that the collection is not referenced by other collections."))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// collWriteError answers a refused collection write as PocketBase does: a
// validation failure or conflict is 400 with the message of the action.
func collWriteError(err error, failed string) error {
	e := FromEngine(err)
	if e.Status == http.StatusBadRequest || e.Status == http.StatusConflict || e.Status == http.StatusUnprocessableEntity {
		return NewError(http.StatusBadRequest, failed, e.Data)
	}
	return e
}
