package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine/queue"
)

// Jobs is what the scheduled job routes need (engine/queue).
type Jobs interface {
	CronJobs(ctx context.Context) ([]queue.CronJob, error)
	CronJob(ctx context.Context, id string) (*queue.CronJob, error)
	CreateCronJob(ctx context.Context, in queue.CronJobInput) (*queue.CronJob, uint64, error)
	UpdateCronJob(ctx context.Context, id string, in queue.CronJobInput) (*queue.CronJob, uint64, error)
	DeleteCronJob(ctx context.Context, id string) (uint64, error)
	RunNow(ctx context.Context, id string) (*queue.Run, uint64, error)
	Runs(ctx context.Context, id string, page, perPage int) (*queue.RunPage, error)
}

// Routes (developer role and above; writes audited as jobs.create,
// jobs.update, jobs.delete, jobs.run):
//
//	GET, POST          /admin/jobs           list, create {name, cron | run_at, mode, code, enabled, catch_up}
//	GET, PATCH, DELETE /admin/jobs/{id}      read, change, delete one
//	POST               /admin/jobs/{id}/run  run it now (on the leader)
//	GET                /admin/jobs/{id}/runs its runs, newest first (page, perPage)
func (s *Server) mountJobs(r chi.Router) {
	r.Get("/admin/jobs", s.listCronJobs)
	r.Post("/admin/jobs", s.createCronJob)
	r.Get("/admin/jobs/{id}", s.getCronJob)
	r.Patch("/admin/jobs/{id}", s.updateCronJob)
	r.Delete("/admin/jobs/{id}", s.deleteCronJob)
	r.Post("/admin/jobs/{id}/run", s.runCronJob)
	r.Get("/admin/jobs/{id}/runs", s.listCronRuns)
}

func (s *Server) listCronJobs(w http.ResponseWriter, r *http.Request) {
	list, err := s.jobs.CronJobs(r.Context())
	s.answer(w, r, http.StatusOK, list, 0, err)
}

func (s *Server) getCronJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.jobs.CronJob(r.Context(), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, j, 0, err)
}

func (s *Server) createCronJob(w http.ResponseWriter, r *http.Request) {
	var in queue.CronJobInput
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	j, idx, err := s.jobs.CreateCronJob(r.Context(), in)
	s.answer(w, r, http.StatusCreated, j, idx, err)
}

func (s *Server) updateCronJob(w http.ResponseWriter, r *http.Request) {
	var in queue.CronJobInput
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	j, idx, err := s.jobs.UpdateCronJob(r.Context(), chi.URLParam(r, "id"), in)
	s.answer(w, r, http.StatusOK, j, idx, err)
}

func (s *Server) deleteCronJob(w http.ResponseWriter, r *http.Request) {
	idx, err := s.jobs.DeleteCronJob(r.Context(), chi.URLParam(r, "id"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) runCronJob(w http.ResponseWriter, r *http.Request) {
	run, idx, err := s.jobs.RunNow(r.Context(), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, run, idx, err)
}

func (s *Server) listCronRuns(w http.ResponseWriter, r *http.Request) {
	page, perPage, err := pageParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.jobs.Runs(r.Context(), chi.URLParam(r, "id"), page, perPage)
	s.answer(w, r, http.StatusOK, out, 0, err)
}
