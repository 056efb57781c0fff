package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
)

// Indexes is what the index routes need (the engine's core).
type Indexes interface {
	Indexes(ctx context.Context, coll string) ([]engine.Index, error)
	CreateIndex(ctx context.Context, coll, field string, unique bool) (*engine.Index, uint64, error)
	DeleteIndex(ctx context.Context, coll, index string) (uint64, error)
}

func (s *Server) mountIndexes(r chi.Router) {
	r.Get("/admin/collections/{name}/indexes", s.listIndexes)
	r.Post("/admin/collections/{name}/indexes", s.createIndex)
	r.Delete("/admin/collections/{name}/indexes/{index}", s.deleteIndex)
}

func (s *Server) listIndexes(w http.ResponseWriter, r *http.Request) {
	ix, err := s.indexes.Indexes(r.Context(), chi.URLParam(r, "name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, ix)
}

func (s *Server) createIndex(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Field  string `json:"field"`
		Unique bool   `json:"unique"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	ix, idx, err := s.indexes.CreateIndex(r.Context(), chi.URLParam(r, "name"), in.Field, in.Unique)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, ix)
}

func (s *Server) deleteIndex(w http.ResponseWriter, r *http.Request) {
	idx, err := s.indexes.DeleteIndex(r.Context(), chi.URLParam(r, "name"), chi.URLParam(r, "index"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
