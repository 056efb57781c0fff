package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/cluster"
)

// Migrations reports whether the replica's internal tables are migrated
// (the engine's core): a node is not ready before.
type Migrations interface {
	Migrated() bool
}

func (s *Server) mountHealth(r chi.Router) {
	r.Get("/_/health", s.health)
	r.Get("/_/ready", s.ready)
	r.Get("/_/cluster", s.clusterSummary)
}

// health is liveness: the process serves HTTP (always 200). Its status
// is "ok", or the storage condition that keeps the node from writing:
// "disk full" or "stalled" (its state machine stopped at an entry), with
// the figures and the reason under storage.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	st := s.node.Storage()
	writeJSON(w, http.StatusOK, map[string]any{
		"status":     st.Condition(),
		"worker_id":  s.node.NodeID(),
		"pid":        s.pid,
		"uptime":     int64(time.Since(s.started).Seconds()),
		"node_id":    s.node.NodeID(),
		"raft_state": s.node.State(),
		"storage":    st,
	})
}

// ready is 200 once the node has a leader, has applied what its log held at
// start, and its internal schema is migrated, while its storage lets it
// write: a full disk or a stopped state machine is 503 with the reason.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	raftReady, migrated, st := s.node.Ready(), s.migrations.Migrated(), s.node.Storage()
	status := http.StatusOK
	if !raftReady || !migrated || st.Condition() != "ok" {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	body := map[string]any{
		"ready":    status == http.StatusOK,
		"raft":     raftReady,
		"migrated": migrated,
		"storage":  st.Condition(),
		"node_id":  s.node.NodeID(),
	}
	if st.Condition() != "ok" {
		body["reason"] = storageReason(st)
	}
	writeJSON(w, status, body)
}

// storageReason says why a node's storage keeps it from writing.
func storageReason(st cluster.StorageStatus) string {
	if st.Stalled {
		return st.StallReason
	}
	return fmt.Sprintf("disk full: %d bytes free, the floor is %d bytes", st.FreeBytes, st.MinFreeBytes)
}

func (s *Server) clusterSummary(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"node_id":   s.node.NodeID(),
		"state":     s.node.State(),
		"leader_id": s.node.LeaderID(),
		"healthy":   s.node.Ready() && s.migrations.Migrated() && s.node.Storage().Condition() == "ok",
		"storage":   s.node.Storage().Condition(),
	})
}
