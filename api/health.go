package api

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

func (s *Server) mountHealth(r chi.Router) {
	r.Get("/_/health", s.health)
	r.Get("/_/ready", s.ready)
	r.Get("/_/cluster", s.clusterSummary)
}

// health is liveness: the process serves HTTP.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"status":     "ok",
		"worker_id":  s.node.NodeID(),
		"pid":        s.pid,
		"uptime":     int64(time.Since(s.started).Seconds()),
		"node_id":    s.node.NodeID(),
		"raft_state": s.node.State(),
	})
}

// ready is 200 once the node has a leader, has applied what its log held at
// start, and its internal schema is migrated.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	raftReady, migrated := s.node.Ready(), s.eng.Migrated()
	status := http.StatusOK
	if !raftReady || !migrated {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]any{
		"ready":    status == http.StatusOK,
		"raft":     raftReady,
		"migrated": migrated,
		"node_id":  s.node.NodeID(),
	})
}

func (s *Server) clusterSummary(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"node_id":   s.node.NodeID(),
		"state":     s.node.State(),
		"leader_id": s.node.LeaderID(),
		"healthy":   s.node.Ready() && s.eng.Migrated(),
	})
}
