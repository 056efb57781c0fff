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
	// RuleErrors names the rules of c that no longer compile (a field
	// they read was removed since): rule name → reason, nil when none.
	RuleErrors(c *schema.Collection) map[string]string
}

// collectionView is a collection as admins see it: its definition, plus
// rule_errors when a rule is broken (such a rule denies everyone but
// admins). rule_errors is read only: a definition sent back with it is
// accepted and the member ignored.
type collectionView struct {
	*schema.Collection
	RuleErrors map[string]string `json:"rule_errors,omitempty"`
}

func (s *Server) view(c *schema.Collection) collectionView {
	return collectionView{Collection: c, RuleErrors: s.colls.RuleErrors(c)}
}

func (s *Server) mountCollections(r chi.Router) {
	r.Get("/admin/collections", s.listCollections)
	r.Post("/admin/collections", s.createCollection)
	r.Get("/admin/collections/{name}", s.getCollection)
	r.Patch("/admin/collections/{name}", s.updateCollection)
	r.Delete("/admin/collections/{name}", s.deleteCollection)
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request) {
	list := s.colls.Collections()
	out := make([]collectionView, len(list))
	for i, c := range list {
		out[i] = s.view(c)
	}
	writeData(w, http.StatusOK, out)
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request) {
	c, err := s.colls.Collection(chi.URLParam(r, "name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, s.view(c))
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
	writeData(w, http.StatusCreated, s.view(c))
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
	writeData(w, http.StatusOK, s.view(c))
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
