package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/cluster"
	"svcd/engine"
)

// readWait bounds how long a read waits for X-Svc-Min-Index or a strong
// read index (CONTRACT.md: 5 s, then 503).
const readWait = 5 * time.Second

var errReadTimeout = &engine.Error{Kind: engine.KindUnavailable, Message: "This node has not caught up with the requested index yet", RetryAfter: 1}

// consistency applies X-Svc-Min-Index and X-Svc-Consistency: strong to
// every request before it runs: the node waits until its replica holds the
// given index, or the leader's commit index confirmed with a quorum. Reads
// see at least that state; so do the checks a write makes before it is
// proposed (the record exists, the credentials match), so an update sent
// to another node right after the create carries the create's X-Svc-Index
// and does not answer 404.
func (s *Server) consistency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Never older than a write this node has acknowledged.
		want := s.node.AckedIndex()
		if v := r.Header.Get("X-Svc-Min-Index"); v != "" {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				s.writeError(w, r, engine.Errorf(engine.KindBadRequest, "X-Svc-Min-Index must be a log index"))
				return
			}
			want = max(want, n)
		}
		ctx, cancel := context.WithTimeout(r.Context(), readWait)
		defer cancel()
		switch strings.ToLower(r.Header.Get("X-Svc-Consistency")) {
		case "", "local":
		case "strong":
			idx, err := s.node.ReadIndex(ctx)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			want = max(want, idx)
		default:
			s.writeError(w, r, engine.Errorf(engine.KindBadRequest, "X-Svc-Consistency must be local or strong"))
			return
		}
		if want > 0 {
			if err := s.node.WaitIndex(ctx, want); err != nil {
				s.writeError(w, r, errReadTimeout)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) mountCluster(r chi.Router) {
	r.Get("/admin/cluster", s.clusterState)
	r.Post("/admin/cluster/members", s.addMember)
	r.Delete("/admin/cluster/members/{id}", s.removeMember)
	r.Post("/admin/cluster/leadership", s.transferLeadership)
	r.Post("/admin/cluster/snapshot", s.takeSnapshot)
	r.Get("/admin/cluster/digest", s.digest)
}

// digest answers a hash of every table of this replica, with the applied
// index it reflects: equal digests at equal indexes prove replicas agree.
func (s *Server) digest(w http.ResponseWriter, r *http.Request) {
	if s.digestFn == nil {
		s.writeError(w, r, errRouteNotFound)
		return
	}
	d, idx, err := s.digestFn(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"applied_index": idx, "tables": d})
}

type memberView struct {
	ID            string `json:"id"`
	RaftAddr      string `json:"raft_addr"`
	HTTPAddr      string `json:"http_addr"`
	Region        string `json:"region"`
	Suffrage      string `json:"suffrage"`
	Status        string `json:"status"`
	AppliedIndex  uint64 `json:"applied_index"`
	Lag           uint64 `json:"lag"`
	LastContactMs int64  `json:"last_contact_ms"`
	// Storage is "ok", "disk full" or "stalled" (its state machine stopped
	// at an entry), with the figures and the reason.
	Storage       string                 `json:"storage"`
	StorageDetail *cluster.StorageStatus `json:"storage_detail,omitempty"`
}

// clusterState describes the cluster as this node sees it: each member
// is asked for its status over the authenticated channel (1 s); liveness
// is the gossip ring's view (alive, suspect, dead) when gossip runs, else
// alive for a member that answered and dead for one that did not. lag is
// how far its applied index trails this node's commit index.
func (s *Server) clusterState(w http.ResponseWriter, r *http.Request) {
	servers, err := s.node.Servers()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st := s.node.Stats()
	statuses := s.node.MemberStatus(r.Context(), time.Second)
	gossip := s.node.GossipStates()
	members := []memberView{}
	for _, sv := range servers {
		m := memberView{ID: sv.ID, RaftAddr: sv.Addr, Suffrage: "nonvoter", Status: "dead"}
		if sv.Voter {
			m.Suffrage = "voter"
		}
		ms, answered := statuses[sv.ID]
		switch g := gossip[sv.ID]; {
		case g == "dead" || g == "suspect":
			m.Status = g
		case answered:
			m.Status = "alive"
		case g == "alive":
			m.Status = "suspect" // gossip has not noticed yet, but it does not answer
		}
		if answered {
			m.HTTPAddr, m.Region = ms.HTTPAddr, ms.Region
			m.AppliedIndex, m.LastContactMs = ms.AppliedIndex, ms.LastContact
			m.Storage, m.StorageDetail = ms.Storage.Condition(), &ms.Storage
			if st.CommitIndex > ms.AppliedIndex {
				m.Lag = st.CommitIndex - ms.AppliedIndex
			}
		}
		members = append(members, m)
	}
	writeData(w, http.StatusOK, map[string]any{
		"node_id": s.node.NodeID(), "state": s.node.State(), "leader_id": s.node.LeaderID(),
		"term": st.Term, "commit_index": st.CommitIndex, "applied_index": st.AppliedIndex, "members": members,
	})
}

func (s *Server) takeSnapshot(w http.ResponseWriter, r *http.Request) {
	idx, term, size, err := s.node.Snapshot()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"index": idx, "term": term, "size": size})
}
