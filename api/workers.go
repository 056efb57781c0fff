package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine/queue"
)

// Workers is what the queue worker routes need (engine/queue).
type Workers interface {
	Workers(ctx context.Context) ([]queue.Worker, error)
	Worker(ctx context.Context, id string) (*queue.Worker, error)
	CreateWorker(ctx context.Context, in queue.WorkerInput) (*queue.Worker, uint64, error)
	UpdateWorker(ctx context.Context, id string, in queue.WorkerInput) (*queue.Worker, uint64, error)
	DeleteWorker(ctx context.Context, id string) (uint64, error)
}

// Routes (developer role and above; writes audited as workers.create,
// workers.update, workers.delete):
//
//	GET, POST          /admin/workers       list, create {queue, code, concurrency, enabled}
//	GET, PATCH, DELETE /admin/workers/{id}  read, change, delete one
func (s *Server) mountWorkers(r chi.Router) {
	r.Get("/admin/workers", s.listWorkers)
	r.Post("/admin/workers", s.createWorker)
	r.Get("/admin/workers/{id}", s.getWorker)
	r.Patch("/admin/workers/{id}", s.updateWorker)
	r.Delete("/admin/workers/{id}", s.deleteWorker)
}

func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) {
	list, err := s.workers.Workers(r.Context())
	s.answer(w, r, http.StatusOK, list, 0, err)
}

func (s *Server) getWorker(w http.ResponseWriter, r *http.Request) {
	wk, err := s.workers.Worker(r.Context(), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, wk, 0, err)
}

func (s *Server) createWorker(w http.ResponseWriter, r *http.Request) {
	var in queue.WorkerInput
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	wk, idx, err := s.workers.CreateWorker(r.Context(), in)
	s.answer(w, r, http.StatusCreated, wk, idx, err)
}

func (s *Server) updateWorker(w http.ResponseWriter, r *http.Request) {
	var in queue.WorkerInput
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	wk, idx, err := s.workers.UpdateWorker(r.Context(), chi.URLParam(r, "id"), in)
	s.answer(w, r, http.StatusOK, wk, idx, err)
}

func (s *Server) deleteWorker(w http.ResponseWriter, r *http.Request) {
	idx, err := s.workers.DeleteWorker(r.Context(), chi.URLParam(r, "id"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
