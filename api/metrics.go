package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) mountMetrics(r chi.Router) {
	r.Get("/_/metrics", s.metricsSnapshot)
}

// metricsSnapshot is the admin JSON snapshot of this node's figures.
func (s *Server) metricsSnapshot(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{}
	if s.stats != nil {
		out = s.stats()
	}
	out["pid"] = s.pid
	if s.rate != nil {
		out["rate_limited"] = s.rate.limited.Load()
	}
	s.realtimeStats(out)
	writeData(w, http.StatusOK, out)
}
