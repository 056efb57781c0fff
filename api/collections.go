package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine/schema"
)

// Collections is what the collection routes need (the engine's core).
type Collections interface {
	Collections() []*schema.Collection
	Collection(nameOrID string) (*schema.Collection, error)
	CreateCollection(ctx context.Context, body []byte) (*schema.Collection, uint64, error)
	UpdateCollection(ctx context.Context, nameOrID string, body []byte) (*schema.Collection, uint64, error)
	DeleteCollection(ctx context.Context, nameOrID string) (uint64, error)
}

func (s *Server) mountCollections(r chi.Router) {
	r.Get("/admin/collections", s.listCollections)
	r.Post("/admin/collections", s.createCollection)
	r.Get("/admin/collections/{name}", s.getCollection)
	r.Patch("/admin/collections/{name}", s.updateCollection)
	r.Delete("/admin/collections/{name}", s.deleteCollection)
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, s.colls.Collections())
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request) {
	c, err := s.colls.Collection(chi.URLParam(r, "name"))
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
	c, idx, err := s.colls.CreateCollection(r.Context(), body)
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
	c, idx, err := s.colls.UpdateCollection(r.Context(), chi.URLParam(r, "name"), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, c)
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request) {
	idx, err := s.colls.DeleteCollection(r.Context(), chi.URLParam(r, "name"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
