package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/history"
)

// History is what the history routes need (engine/history).
type History interface {
	RecordHistory(ctx context.Context, p engine.Principal, coll, id string, page, perPage int) (*history.Page, error)
	RestoreRecord(ctx context.Context, p engine.Principal, coll, id, at string) (*history.Restored, uint64, error)
}

// Record history routes (next to the record routes):
//
//	GET  /{collection}/{id}/history       entries, newest first
//	POST /{collection}/{id}/restore?at=   admin: restore the snapshot at or before at
func (s *Server) mountHistory(r chi.Router, prefix string) {
	r.Get(prefix+"/{id}/history", s.recordHistory)
	r.Post(prefix+"/{id}/restore", s.restoreRecord)
}

// recordHistory answers {data: {data: [entries], page, perPage,
// totalItems, totalPages}}.
func (s *Server) recordHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	perPage, _ := strconv.Atoi(q.Get("perPage"))
	h, err := s.history.RecordHistory(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"), page, perPage)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b := make([]byte, 0, len(h.Data)+128)
	b = append(b, `{"data":{"data":`...)
	b = append(b, h.Data...)
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, int64(h.Page), 10)
	b = append(b, `,"perPage":`...)
	b = strconv.AppendInt(b, int64(h.PerPage), 10)
	b = append(b, `,"totalItems":`...)
	b = strconv.AppendInt(b, int64(h.TotalItems), 10)
	b = append(b, `,"totalPages":`...)
	b = strconv.AppendInt(b, int64(h.TotalPages), 10)
	b = append(b, "}}\n"...)
	writeBytes(w, http.StatusOK, b)
}

// restoreRecord applies the snapshot at or before ?at= as an update and
// answers the record as updated; when files the snapshot names could not
// be restored, `missing_files` beside `data` lists them
// ([{field, filename}]).
func (s *Server) restoreRecord(w http.ResponseWriter, r *http.Request) {
	res, idx, err := s.history.RestoreRecord(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"), r.URL.Query().Get("at"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", res.Record.ETag)
	if len(res.MissingFiles) == 0 {
		writeRawData(w, http.StatusOK, res.Record.JSON)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data         json.RawMessage       `json:"data"`
		MissingFiles []history.MissingFile `json:"missing_files"`
	}{res.Record.JSON, res.MissingFiles})
}
