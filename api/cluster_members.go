package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/cluster"
	"svcd/engine"
)

// Membership and leadership (owner; CONTRACT.md). Any node takes them: a
// follower forwards the change to the leader like any write (DESIGN.md:
// any node serves any request).
//
//	POST   /admin/cluster/members      {id, raft_addr, voter?}  -> 201 {id, raft_addr, voter}
//	DELETE /admin/cluster/members/:id                           -> 204
//	POST   /admin/cluster/leadership   {id?}                    -> {leader_id, leader_http_addr, previous_leader_id}
//
// A change that cannot reach a leader within 5 s (none known, or it does
// not answer) is a 409 whose details name the leader this node tried, or
// else the one it knows now: {leader_id, leader_http_addr} ("" when
// unknown), so the client can send it there.

// leaderLookup bounds the search for the leader's HTTP address when a
// change is refused.
const leaderLookup = time.Second

// membershipError answers a refused membership change or transfer.
func (s *Server) membershipError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, cluster.ErrNoSuchMember):
		s.writeError(w, r, engine.Errorf(engine.KindNotFound, "No voting member with this id"))
	case errors.Is(err, cluster.ErrAlreadyLeader):
		s.writeError(w, r, engine.ValidationError(map[string]string{"id": "this node already leads"}))
	case errors.Is(err, cluster.ErrNoOtherVoter):
		s.writeError(w, r, engine.ValidationError(map[string]string{"id": "no other voter to hand leadership to"}))
	case errors.Is(err, cluster.ErrTransferInProgress):
		s.writeError(w, r, &engine.Error{Kind: engine.KindConflict, Message: "A leadership transfer is already in progress; retry shortly"})
	case errors.Is(err, cluster.ErrTransferFailed):
		s.writeError(w, r, &engine.Error{Kind: engine.KindUnavailable, RetryAfter: 1,
			Message: "The leader could not hand leadership over and still leads: " + err.Error()})
	case errors.Is(err, cluster.ErrNoLeader), errors.Is(err, cluster.ErrNotForwarded):
		// The leader this node tried to reach, else the one it knows now.
		id := s.node.LeaderID()
		var nl *cluster.NoLeaderError
		if errors.As(err, &nl) && nl.Leader != "" {
			id = nl.Leader
		}
		addr := ""
		if id != "" {
			ctx, cancel := context.WithTimeout(r.Context(), leaderLookup)
			addr = s.node.MemberHTTPAddr(ctx, id)
			cancel()
		}
		msg := "Membership changes are made on the leader, and no leader could be reached from this node; retry, or send the change to the leader"
		if errors.Is(err, cluster.ErrNotForwarded) {
			msg = "Membership changes are made on the leader, which runs an older version that does not take them forwarded; send the change to the leader"
		}
		s.writeError(w, r, &engine.Error{Kind: engine.KindConflict, Message: msg,
			Details: map[string]any{"leader_id": id, "leader_http_addr": addr}})
	default:
		s.writeError(w, r, err)
	}
}

func (s *Server) addMember(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID       string `json:"id"`
		RaftAddr string `json:"raft_addr"`
		Voter    *bool  `json:"voter"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.ID == "" || in.RaftAddr == "" {
		s.writeError(w, r, engine.ValidationError(map[string]string{"id": "required with raft_addr"}))
		return
	}
	voter := in.Voter == nil || *in.Voter
	if err := s.node.AddServer(r.Context(), in.ID, in.RaftAddr, voter); err != nil {
		s.membershipError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, map[string]any{"id": in.ID, "raft_addr": in.RaftAddr, "voter": voter})
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) {
	if err := s.node.RemoveServer(r.Context(), chi.URLParam(r, "id")); err != nil {
		s.membershipError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// transferLeadership answers once this node knows the new leader (at most
// cluster.TransferWait after the leader handed over; then 503).
func (s *Server) transferLeadership(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID string `json:"id"`
	}
	if r.ContentLength != 0 {
		if err := s.decodeJSON(w, r, &in); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	t, err := s.node.TransferLeadership(r.Context(), in.ID)
	if errors.Is(err, cluster.ErrTransferTimeout) {
		s.writeError(w, r, &engine.Error{Kind: engine.KindUnavailable, RetryAfter: 1,
			Message: "Leadership was handed over, but this node learned of no new leader within " + cluster.TransferWait.String() +
				"; see GET /api/v1/admin/cluster",
			Details: map[string]any{"previous_leader_id": t.Previous}})
		return
	}
	if err != nil {
		s.membershipError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{
		"leader_id": t.Leader.ID, "leader_http_addr": t.Leader.HTTPAddr, "previous_leader_id": t.Previous,
	})
}
