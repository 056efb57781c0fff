package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/migrations"
)

// SchemaMigrations is what the migration routes need (engine/migrations).
type SchemaMigrations interface {
	Snapshot(ctx context.Context) (*migrations.Snapshot, error)
	Diff(ctx context.Context, s *migrations.Snapshot, mode migrations.Mode) (*migrations.Diff, error)
	Apply(ctx context.Context, s *migrations.Snapshot, mode migrations.Mode) (*migrations.Diff, uint64, error)
}

// Schema snapshots (developer; docs/operations.md "Migrations"):
//
//	GET  /admin/migrations/snapshot  the schema as a portable snapshot
//	POST /admin/migrations/diff      {snapshot, mode}: what an apply would change
//	POST /admin/migrations/apply     {snapshot, mode}: apply it through one command
func (s *Server) mountMigrations(r chi.Router) {
	if s.schemaMig == nil {
		return
	}
	r.Get("/admin/migrations/snapshot", s.schemaSnapshot)
	r.Post("/admin/migrations/diff", s.schemaDiff)
	r.Post("/admin/migrations/apply", s.schemaApply)
}

func (s *Server) schemaSnapshot(w http.ResponseWriter, r *http.Request) {
	snap, err := s.schemaMig.Snapshot(r.Context())
	s.answer(w, r, http.StatusOK, snap, 0, err)
}

// snapshotRequest reads {snapshot, mode}.
func (s *Server) snapshotRequest(w http.ResponseWriter, r *http.Request) (*migrations.Snapshot, migrations.Mode, error) {
	var in struct {
		Snapshot json.RawMessage `json:"snapshot"`
		Mode     string          `json:"mode"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		return nil, "", err
	}
	mode, err := migrations.ParseMode(in.Mode)
	if err != nil {
		return nil, "", err
	}
	if len(in.Snapshot) == 0 || string(in.Snapshot) == "null" {
		return nil, "", engine.FieldError("snapshot", "is required")
	}
	snap, err := migrations.Decode(in.Snapshot)
	return snap, mode, err
}

func (s *Server) schemaDiff(w http.ResponseWriter, r *http.Request) {
	snap, mode, err := s.snapshotRequest(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.schemaMig.Diff(r.Context(), snap, mode)
	s.answer(w, r, http.StatusOK, d, 0, err)
}

func (s *Server) schemaApply(w http.ResponseWriter, r *http.Request) {
	snap, mode, err := s.snapshotRequest(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, idx, err := s.schemaMig.Apply(r.Context(), snap, mode)
	s.answer(w, r, http.StatusOK, d, idx, err)
}
