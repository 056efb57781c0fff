package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) mountIndexes(r chi.Router) {
	r.Get("/admin/collections/{name}/indexes", s.listIndexes)
	r.Post("/admin/collections/{name}/indexes", s.createIndex)
	r.Delete("/admin/collections/{name}/indexes/{index}", s.deleteIndex)
}

func (s *Server) listIndexes(w http.ResponseWriter, r *http.Request) {
	ix, err := s.eng.Indexes(r.Context(), chi.URLParam(r, "name"))
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
	ix, idx, err := s.eng.CreateIndex(r.Context(), chi.URLParam(r, "name"), in.Field, in.Unique)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, ix)
}

func (s *Server) deleteIndex(w http.ResponseWriter, r *http.Request) {
	idx, err := s.eng.DeleteIndex(r.Context(), chi.URLParam(r, "name"), chi.URLParam(r, "index"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
