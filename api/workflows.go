package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/workflows"
)

// Workflows is what the workflow routes need (engine/workflows).
type Workflows interface {
	List(ctx context.Context) ([]workflows.Workflow, error)
	Get(ctx context.Context, name string) (*workflows.Workflow, error)
	Create(ctx context.Context, name, code string) (*workflows.Workflow, uint64, error)
	Update(ctx context.Context, name, code string) (*workflows.Workflow, uint64, error)
	Delete(ctx context.Context, name string) (uint64, error)
	ListRuns(ctx context.Context, name, state string, page, perPage int) (*workflows.RunPage, error)
	GetRun(ctx context.Context, id string) (*workflows.Run, error)
	StartRun(ctx context.Context, name string, input any) (string, uint64, error)
	Retry(ctx context.Context, id string) (*workflows.Run, uint64, error)
	EmitEvent(ctx context.Context, event string, payload any, key string) (*workflows.EmitResult, uint64, error)
}

// Workflow routes (developer role; docs/workflows.md):
//
//	GET, POST          /admin/workflows                  list, create {name, code}
//	GET, PATCH, DELETE /admin/workflows/{name}           read, change {code}, delete (with its runs)
//	GET                /admin/workflows/{name}/runs      runs, newest first (?state, page, perPage)
//	POST               /admin/workflows/{name}/start     {input} -> {runId}
//	GET                /admin/workflows/runs/{id}        one run
//	POST               /admin/workflows/runs/{id}/retry  resume a failed run
//	POST               /admin/workflows/events           emit {event, payload, key} -> {woken}
func (s *Server) mountWorkflows(r chi.Router) {
	r.Get("/admin/workflows", s.listWorkflows)
	r.Post("/admin/workflows", s.createWorkflow)
	r.Post("/admin/workflows/events", s.emitWorkflowEvent)
	r.Get("/admin/workflows/runs/{id}", s.getWorkflowRun)
	r.Post("/admin/workflows/runs/{id}/retry", s.retryWorkflowRun)
	r.Get("/admin/workflows/{name}", s.getWorkflow)
	r.Patch("/admin/workflows/{name}", s.updateWorkflow)
	r.Delete("/admin/workflows/{name}", s.deleteWorkflow)
	r.Get("/admin/workflows/{name}/runs", s.listWorkflowRuns)
	r.Post("/admin/workflows/{name}/start", s.startWorkflow)
}

func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request) {
	list, err := s.workflows.List(r.Context())
	s.answer(w, r, http.StatusOK, list, 0, err)
}

func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request) {
	wf, err := s.workflows.Get(r.Context(), chi.URLParam(r, "name"))
	s.answer(w, r, http.StatusOK, wf, 0, err)
}

// workflowBody is the body of a create or a change.
type workflowBody struct {
	Name *string `json:"name"`
	Code *string `json:"code"`
}

func (s *Server) createWorkflow(w http.ResponseWriter, r *http.Request) {
	var in workflowBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.Name == nil || in.Code == nil {
		s.writeError(w, r, engine.ValidationError(missing(map[string]bool{"name": in.Name == nil, "code": in.Code == nil})))
		return
	}
	wf, idx, err := s.workflows.Create(r.Context(), *in.Name, *in.Code)
	s.answer(w, r, http.StatusCreated, wf, idx, err)
}

// missing is the details of a body that lacks the required members set
// in which.
func missing(which map[string]bool) map[string]string {
	out := map[string]string{}
	for k, lacks := range which {
		if lacks {
			out[k] = "is required"
		}
	}
	return out
}

func (s *Server) updateWorkflow(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	var in workflowBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch {
	case in.Name != nil && *in.Name != name:
		s.writeError(w, r, engine.FieldError("name", "cannot change (runs name their workflow)"))
		return
	case in.Code == nil:
		s.writeError(w, r, engine.FieldError("code", "is required"))
		return
	}
	wf, idx, err := s.workflows.Update(r.Context(), name, *in.Code)
	s.answer(w, r, http.StatusOK, wf, idx, err)
}

func (s *Server) deleteWorkflow(w http.ResponseWriter, r *http.Request) {
	idx, err := s.workflows.Delete(r.Context(), chi.URLParam(r, "name"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listWorkflowRuns answers {data: [runs], page, perPage, totalItems,
// totalPages}, newest first.
func (s *Server) listWorkflowRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	perPage, _ := strconv.Atoi(q.Get("perPage"))
	p, err := s.workflows.ListRuns(r.Context(), chi.URLParam(r, "name"), q.Get("state"), page, perPage)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Data       []workflows.Run `json:"data"`
		Page       int             `json:"page"`
		PerPage    int             `json:"perPage"`
		TotalItems int             `json:"totalItems"`
		TotalPages int             `json:"totalPages"`
	}{p.Runs, p.Page, p.PerPage, p.TotalItems, p.TotalPages})
}

func (s *Server) getWorkflowRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.workflows.GetRun(r.Context(), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, run, 0, err)
}

// startWorkflow answers {data: {runId}}; the body {input} may be empty.
func (s *Server) startWorkflow(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Input json.RawMessage `json:"input"`
	}
	if err := s.optionalJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	id, idx, err := s.workflows.StartRun(r.Context(), chi.URLParam(r, "name"), in.Input)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]string{"runId": id})
}

func (s *Server) retryWorkflowRun(w http.ResponseWriter, r *http.Request) {
	run, idx, err := s.workflows.Retry(r.Context(), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, run, idx, err)
}

// emitWorkflowEvent answers {data: {woken}}: how many waiting runs
// received the event.
func (s *Server) emitWorkflowEvent(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Event   string          `json:"event"`
		Payload json.RawMessage `json:"payload"`
		Key     string          `json:"key"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, idx, err := s.workflows.EmitEvent(r.Context(), in.Event, in.Payload, in.Key)
	s.answer(w, r, http.StatusOK, res, idx, err)
}

// optionalJSON decodes a JSON object body into v; an empty body leaves v
// as it is.
func (s *Server) optionalJSON(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return engine.Errorf(engine.KindBadRequest, "Invalid JSON body: %v", err)
	}
	return nil
}
