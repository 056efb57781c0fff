package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
)

// Retention is what the retention routes need (engine/prune.go through
// the composition root).
type Retention interface {
	Prune(ctx context.Context) (*engine.PruneResult, uint64, error)
	Policies() []engine.RetentionPolicy
}

// Retention (owner; docs/operations.md "Retention"):
//
//	GET  /admin/retention      the pruners and their settings
//	POST /admin/retention/run  prune now, answering what was deleted
func (s *Server) mountRetention(r chi.Router) {
	if s.retention == nil {
		return
	}
	r.Get("/admin/retention", s.getRetention)
	r.Post("/admin/retention/run", s.runRetention)
}

// retentionView is the answer of GET /admin/retention.
type retentionView struct {
	IntervalSeconds string                   `json:"interval_seconds"`
	Policies        []engine.RetentionPolicy `json:"policies"`
}

func (s *Server) getRetention(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, retentionView{
		IntervalSeconds: s.settings.Setting(engine.SettingRetentionInterval),
		Policies:        s.retention.Policies(),
	})
}

func (s *Server) runRetention(w http.ResponseWriter, r *http.Request) {
	res, idx, err := s.retention.Prune(r.Context())
	s.answer(w, r, http.StatusOK, res, idx, err)
}
