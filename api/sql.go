package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/sqlconsole"
)

// SQLConsole is what the SQL console routes need (engine/sqlconsole).
type SQLConsole interface {
	Run(ctx context.Context, p engine.Principal, mode, query string, params []any, budgetMs int) (*sqlconsole.Result, error)
	ResetSandbox(ctx context.Context, admin string) (*sqlconsole.SandboxInfo, error)
	Schema(ctx context.Context, p engine.Principal) ([]sqlconsole.Table, error)
	ListQueries(ctx context.Context, p engine.Principal) ([]*sqlconsole.Query, error)
	CreateQuery(ctx context.Context, p engine.Principal, body []byte) (*sqlconsole.Query, uint64, error)
	PatchQuery(ctx context.Context, p engine.Principal, id string, body []byte) (*sqlconsole.Query, uint64, error)
	DeleteQuery(ctx context.Context, p engine.Principal, id string) (uint64, error)
	RunQuery(ctx context.Context, p engine.Principal, id string, params []any, budgetMs int) (*sqlconsole.Result, error)
}

// SQL console routes (developer role, docs/sql.md). A statement that
// fails answers 200 with ok false and an errorCode; a request the
// console refuses outright (bad mode or budget) is an error envelope.
//
//	POST   /admin/sql/run                {sql, mode, params, timeoutMs}
//	POST   /admin/sql/sandbox/reset      rebuild the caller's sandbox
//	GET    /admin/sql/schema             tables, columns, indexes, foreign keys, row counts
//	GET    /admin/sql/queries            the caller's saved queries
//	POST   /admin/sql/queries            save one (201)
//	PATCH  /admin/sql/queries/{id}       change one (owner only)
//	DELETE /admin/sql/queries/{id}       delete one (owner only, 204)
//	POST   /admin/sql/queries/{id}/run   {params?, timeoutMs?}
func (s *Server) mountSQL(r chi.Router) {
	if s.sql == nil {
		return
	}
	r.Post("/admin/sql/run", s.sqlRun)
	r.Post("/admin/sql/sandbox/reset", s.sqlSandboxReset)
	r.Get("/admin/sql/schema", s.sqlSchema)
	r.Get("/admin/sql/queries", s.sqlListQueries)
	r.Post("/admin/sql/queries", s.sqlCreateQuery)
	r.Patch("/admin/sql/queries/{id}", s.sqlPatchQuery)
	r.Delete("/admin/sql/queries/{id}", s.sqlDeleteQuery)
	r.Post("/admin/sql/queries/{id}/run", s.sqlRunQuery)
}

// sqlRunBody is the body of a run; numbers stay exact (json.Number).
type sqlRunBody struct {
	SQL       string `json:"sql"`
	Mode      string `json:"mode"`
	Params    []any  `json:"params"`
	TimeoutMs int    `json:"timeoutMs"`
}

// decodeRun reads a run body; an empty body is an empty run.
func (s *Server) decodeRun(w http.ResponseWriter, r *http.Request) (*sqlRunBody, error) {
	b, err := s.readBody(w, r)
	if err != nil {
		return nil, err
	}
	var body sqlRunBody
	if len(bytes.TrimSpace(b)) == 0 {
		return &body, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		return nil, engine.Errorf(engine.KindBadRequest, "Invalid JSON body: %v", err)
	}
	return &body, nil
}

func (s *Server) sqlRun(w http.ResponseWriter, r *http.Request) {
	body, err := s.decodeRun(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Mode == "" {
		body.Mode = sqlconsole.ModeReadonly
	}
	res, err := s.sql.Run(r.Context(), principal(r), body.Mode, body.SQL, body.Params, body.TimeoutMs)
	s.answer(w, r, http.StatusOK, res, 0, err)
}

func (s *Server) sqlSandboxReset(w http.ResponseWriter, r *http.Request) {
	info, err := s.sql.ResetSandbox(r.Context(), principal(r).ID)
	s.answer(w, r, http.StatusOK, info, 0, err)
}

func (s *Server) sqlSchema(w http.ResponseWriter, r *http.Request) {
	tables, err := s.sql.Schema(r.Context(), principal(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"tables": tables})
}

func (s *Server) sqlListQueries(w http.ResponseWriter, r *http.Request) {
	l, err := s.sql.ListQueries(r.Context(), principal(r))
	s.answer(w, r, http.StatusOK, l, 0, err)
}

func (s *Server) sqlCreateQuery(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q, idx, err := s.sql.CreateQuery(r.Context(), principal(r), b)
	s.answer(w, r, http.StatusCreated, q, idx, err)
}

func (s *Server) sqlPatchQuery(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q, idx, err := s.sql.PatchQuery(r.Context(), principal(r), chi.URLParam(r, "id"), b)
	s.answer(w, r, http.StatusOK, q, idx, err)
}

func (s *Server) sqlDeleteQuery(w http.ResponseWriter, r *http.Request) {
	idx, err := s.sql.DeleteQuery(r.Context(), principal(r), chi.URLParam(r, "id"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) sqlRunQuery(w http.ResponseWriter, r *http.Request) {
	body, err := s.decodeRun(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.sql.RunQuery(r.Context(), principal(r), chi.URLParam(r, "id"), body.Params, body.TimeoutMs)
	s.answer(w, r, http.StatusOK, res, 0, err)
}
