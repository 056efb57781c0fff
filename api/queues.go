package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/queue"
)

// Queues is what the queue routes need (engine/queue).
type Queues interface {
	Queues(ctx context.Context) ([]queue.QueueStats, error)
	Jobs(ctx context.Context, queueName string, q queue.JobQuery) (*queue.JobPage, error)
	GetJob(ctx context.Context, queueName, id string) (*queue.Job, error)
	EnqueueJSON(ctx context.Context, queueName string, payload json.RawMessage, opts queue.EnqueueOptions) (*queue.Enqueued, uint64, error)
	RetryDead(ctx context.Context, queueName, id string) (*queue.Job, uint64, error)
}

// Routes (developer role and above; writes audited as queues.enqueue and
// queues.retry):
//
//	GET  /admin/queues                            every queue with its jobs counted by state
//	GET  /admin/queues/{queue}/jobs               a page of its jobs (state, page, perPage)
//	POST /admin/queues/{queue}/jobs               enqueue {payload, delay, uniqueKey, retries, backoff, retryDelayMs}
//	GET  /admin/queues/{queue}/jobs/{id}          one job
//	POST /admin/queues/{queue}/jobs/{id}/retry    a dead job back to queued
func (s *Server) mountQueues(r chi.Router) {
	r.Get("/admin/queues", s.listQueues)
	r.Get("/admin/queues/{queue}/jobs", s.listQueueJobs)
	r.Post("/admin/queues/{queue}/jobs", s.enqueue)
	r.Get("/admin/queues/{queue}/jobs/{id}", s.getQueueJob)
	r.Post("/admin/queues/{queue}/jobs/{id}/retry", s.retryQueueJob)
}

func (s *Server) listQueues(w http.ResponseWriter, r *http.Request) {
	list, err := s.queues.Queues(r.Context())
	s.answer(w, r, http.StatusOK, list, 0, err)
}

func (s *Server) listQueueJobs(w http.ResponseWriter, r *http.Request) {
	page, perPage, err := pageParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := queue.JobQuery{State: r.URL.Query().Get("state"), Page: page, PerPage: perPage}
	out, err := s.queues.Jobs(r.Context(), chi.URLParam(r, "queue"), q)
	s.answer(w, r, http.StatusOK, out, 0, err)
}

// pageParams reads page and perPage (positive integers; absent: 0, the
// default); a malformed one is a 400 naming it.
func pageParams(r *http.Request) (page, perPage int, err error) {
	bad := map[string]any{}
	read := func(name string) int {
		raw := strings.TrimSpace(r.URL.Query().Get(name))
		if raw == "" {
			return 0
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			bad[name] = "must be a positive integer"
		}
		return n
	}
	page, perPage = read("page"), read("perPage")
	if len(bad) > 0 {
		return 0, 0, &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid query parameters", Details: bad}
	}
	return page, perPage, nil
}

func (s *Server) enqueue(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Payload json.RawMessage `json:"payload"`
		queue.EnqueueOptions
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, idx, err := s.queues.EnqueueJSON(r.Context(), chi.URLParam(r, "queue"), in.Payload, in.EnqueueOptions)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusCreated
	if res.Deduped {
		status = http.StatusOK
	}
	writeData(w, status, res)
}

func (s *Server) getQueueJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.queues.GetJob(r.Context(), chi.URLParam(r, "queue"), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, j, 0, err)
}

func (s *Server) retryQueueJob(w http.ResponseWriter, r *http.Request) {
	j, idx, err := s.queues.RetryDead(r.Context(), chi.URLParam(r, "queue"), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, j, idx, err)
}
