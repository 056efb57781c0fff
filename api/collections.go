package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) mountCollections(r chi.Router) {
	r.Get("/admin/collections", s.listCollections)
	r.Post("/admin/collections", s.createCollection)
	r.Get("/admin/collections/{name}", s.getCollection)
	r.Patch("/admin/collections/{name}", s.updateCollection)
	r.Delete("/admin/collections/{name}", s.deleteCollection)
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, s.eng.Collections())
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request) {
	c, err := s.eng.Collection(chi.URLParam(r, "name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, c)
}

func (s *Server) createCollection(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, idx, err := s.eng.CreateCollection(r.Context(), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, c)
}

func (s *Server) updateCollection(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, idx, err := s.eng.UpdateCollection(r.Context(), chi.URLParam(r, "name"), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, c)
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request) {
	idx, err := s.eng.DeleteCollection(r.Context(), chi.URLParam(r, "name"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
