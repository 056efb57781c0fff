package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine/jsvm"
)

// Scripts is what the hook and route admin routes and the custom routes
// need (engine/jsvm).
type Scripts interface {
	Hooks() []*jsvm.Hook
	Hook(id string) (*jsvm.Hook, error)
	CreateHook(ctx context.Context, body []byte) (*jsvm.Hook, uint64, error)
	UpdateHook(ctx context.Context, id string, body []byte) (*jsvm.Hook, uint64, error)
	DeleteHook(ctx context.Context, id string) (uint64, error)
	Routes() []*jsvm.Route
	Route(id string) (*jsvm.Route, error)
	CreateRoute(ctx context.Context, body []byte) (*jsvm.Route, uint64, error)
	UpdateRoute(ctx context.Context, id string, body []byte) (*jsvm.Route, uint64, error)
	DeleteRoute(ctx context.Context, id string) (uint64, error)
	ServeRoute(ctx context.Context, req jsvm.RouteRequest) (*jsvm.RouteResponse, error)
}

// mountScripts serves the admin CRUD of hooks and custom routes
// (developer role, audited as hooks.create, routes.update, ...).
func (s *Server) mountScripts(r chi.Router) {
	r.Get("/admin/hooks", s.listHooks)
	r.Post("/admin/hooks", s.createHook)
	r.Get("/admin/hooks/{id}", s.getHook)
	r.Patch("/admin/hooks/{id}", s.updateHook)
	r.Delete("/admin/hooks/{id}", s.deleteHook)
	r.Get("/admin/routes", s.listRoutes)
	r.Post("/admin/routes", s.createRoute)
	r.Get("/admin/routes/{id}", s.getRoute)
	r.Patch("/admin/routes/{id}", s.updateRoute)
	r.Delete("/admin/routes/{id}", s.deleteRoute)
}

func (s *Server) listHooks(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, nonNil(s.scripts.Hooks()))
}

func (s *Server) getHook(w http.ResponseWriter, r *http.Request) {
	h, err := s.scripts.Hook(chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, h, 0, err)
}

func (s *Server) createHook(w http.ResponseWriter, r *http.Request) {
	s.saveScript(w, r, http.StatusCreated, func(body []byte) (any, uint64, error) {
		return s.scripts.CreateHook(r.Context(), body)
	})
}

func (s *Server) updateHook(w http.ResponseWriter, r *http.Request) {
	s.saveScript(w, r, http.StatusOK, func(body []byte) (any, uint64, error) {
		return s.scripts.UpdateHook(r.Context(), chi.URLParam(r, "id"), body)
	})
}

func (s *Server) deleteHook(w http.ResponseWriter, r *http.Request) {
	idx, err := s.scripts.DeleteHook(r.Context(), chi.URLParam(r, "id"))
	s.answerDelete(w, r, idx, err)
}

func (s *Server) listRoutes(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, nonNil(s.scripts.Routes()))
}

func (s *Server) getRoute(w http.ResponseWriter, r *http.Request) {
	rt, err := s.scripts.Route(chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, rt, 0, err)
}

func (s *Server) createRoute(w http.ResponseWriter, r *http.Request) {
	s.saveScript(w, r, http.StatusCreated, func(body []byte) (any, uint64, error) {
		return s.scripts.CreateRoute(r.Context(), body)
	})
}

func (s *Server) updateRoute(w http.ResponseWriter, r *http.Request) {
	s.saveScript(w, r, http.StatusOK, func(body []byte) (any, uint64, error) {
		return s.scripts.UpdateRoute(r.Context(), chi.URLParam(r, "id"), body)
	})
}

func (s *Server) deleteRoute(w http.ResponseWriter, r *http.Request) {
	idx, err := s.scripts.DeleteRoute(r.Context(), chi.URLParam(r, "id"))
	s.answerDelete(w, r, idx, err)
}

// saveScript reads the body, saves with save and answers the saved hook
// or route with status.
func (s *Server) saveScript(w http.ResponseWriter, r *http.Request, status int, save func([]byte) (any, uint64, error)) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, idx, err := save(body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, status, v)
}

// answerDelete answers a delete: 204, or the error.
func (s *Server) answerDelete(w http.ResponseWriter, r *http.Request, idx uint64, err error) {
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// nonNil is list, or an empty list for nil (JSON [] rather than null).
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
