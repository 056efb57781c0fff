package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
)

// Records is what the record routes need (the engine's core).
type Records interface {
	ListRecords(ctx context.Context, p engine.Principal, coll string, q engine.ListQuery) (*engine.RecordList, error)
	GetRecord(ctx context.Context, p engine.Principal, coll, id, fields, expand string) (*engine.Record, error)
	CreateRecord(ctx context.Context, p engine.Principal, coll string, body []byte) (*engine.Record, uint64, error)
	UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, body []byte, ifMatch string) (*engine.Record, uint64, error)
	DeleteRecord(ctx context.Context, p engine.Principal, coll, id, ifMatch string) (uint64, error)
}

func (s *Server) mountRecords(r chi.Router) {
	r.Get("/{collection}", s.listRecords)
	r.Post("/{collection}", s.createRecord)
	r.Get("/{collection}/{id}", s.getRecord)
	r.Patch("/{collection}/{id}", s.updateRecord)
	r.Put("/{collection}/{id}", s.updateRecord)
	r.Delete("/{collection}/{id}", s.deleteRecord)
	s.mountHistory(r, "/{collection}")
}

// recordCaller returns the caller of a record route, with what rules may
// read of the request. An admin whose role does not reach app data is
// treated as anonymous there: the collection's rules decide, as for anyone
// without credentials.
func recordCaller(r *http.Request) engine.Principal {
	p := principal(r)
	if p.IsAdmin() && p.Role < requiredRole(r.Method, recordsScope) {
		p = engine.Principal{}
	}
	p.Request = requestInfo(r)
	return p
}

// credentialHeader: these are never handed to rules (they would be
// captured in the log with the command).
func credentialHeader(key string) bool {
	switch key {
	case "authorization", "cookie", "x_setup_key":
		return true
	}
	return false
}

// requestInfo is what @request.* may read: the method, headers (lower
// case, '-' as '_') and the first value of each query parameter.
func requestInfo(r *http.Request) engine.RequestInfo {
	info := engine.RequestInfo{Method: r.Method, Context: "default",
		Headers: make(map[string]string, len(r.Header)), Query: map[string]string{}}
	for k, v := range r.Header {
		key := strings.ReplaceAll(strings.ToLower(k), "-", "_")
		if !credentialHeader(key) && len(v) > 0 {
			info.Headers[key] = v[0]
		}
	}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			info.Query[k] = v[0]
		}
	}
	return info
}

func intParam(q url.Values, name string, def int) int {
	if v := q.Get(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

// listQuery reads the list parameters of a record list URL (also those of
// a list inside a batch).
func listQuery(q url.Values) engine.ListQuery {
	lq := engine.ListQuery{
		Page:       intParam(q, "page", 1),
		PerPage:    intParam(q, "perPage", engine.DefaultPerPage),
		Sort:       q.Get("sort"),
		Fields:     q.Get("fields"),
		SkipTotal:  q.Get("skipTotal") == "1" || q.Get("skipTotal") == "true",
		Filter:     q.Get("filter"),
		Expand:     q.Get("expand"),
		CursorMode: q.Has("cursor"),
		Cursor:     q.Get("cursor"),
	}
	lq.Search = q.Get("search")
	lq.HasNear = q.Has("nearVector")
	lq.NearVector, lq.NearVectorField = q.Get("nearVector"), q.Get("nearVectorField")
	lq.NearLimit, lq.NearMinScore = q.Get("nearLimit"), q.Get("nearMinScore")
	return lq
}

func (s *Server) listRecords(w http.ResponseWriter, r *http.Request) {
	list, err := s.records.ListRecords(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), listQuery(r.URL.Query()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.tellDropped(w, r, list)
	writeBytes(w, http.StatusOK, append(list.AppendJSON(make([]byte, 0, len(list.Data)+96)), '\n'))
}

func (s *Server) getRecord(w http.ResponseWriter, r *http.Request) {
	p := recordCaller(r)
	q := r.URL.Query()
	rec, err := s.records.GetRecord(r.Context(), p, chi.URLParam(r, "collection"), chi.URLParam(r, "id"), q.Get("fields"), q.Get("expand"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", rec.ETag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && engine.ETagMatches(inm, rec.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeRawData(w, http.StatusOK, rec.JSON)
}

func (s *Server) createRecord(w http.ResponseWriter, r *http.Request) {
	if isMultipart(r) {
		s.createRecordMultipart(w, r) // files_multipart.go
		return
	}
	p := recordCaller(r)
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, idx, err := s.records.CreateRecord(r.Context(), p, chi.URLParam(r, "collection"), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", rec.ETag)
	writeRawData(w, http.StatusCreated, rec.JSON)
}

func (s *Server) updateRecord(w http.ResponseWriter, r *http.Request) {
	if isMultipart(r) {
		s.updateRecordMultipart(w, r) // files_multipart.go
		return
	}
	p := recordCaller(r)
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, idx, err := s.records.UpdateRecord(r.Context(), p, chi.URLParam(r, "collection"), chi.URLParam(r, "id"), body, r.Header.Get("If-Match"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", rec.ETag)
	writeRawData(w, http.StatusOK, rec.JSON)
}

func (s *Server) deleteRecord(w http.ResponseWriter, r *http.Request) {
	p := recordCaller(r)
	idx, err := s.records.DeleteRecord(r.Context(), p, chi.URLParam(r, "collection"), chi.URLParam(r, "id"), r.Header.Get("If-Match"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
