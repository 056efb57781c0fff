package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"svcd/cluster"
	"svcd/engine"
)

// The join endpoint (outside /api/v1; docs/cluster.md):
//
//	GET  /_/join  -> {node_id, join_auth}: whom a join sent here must be signed for
//	POST /_/join  {id, addr, voter}, signed (cluster.SignJoin) -> {leader_id, secrets}
//
// A node that holds the cluster key asks to be added; it receives the
// token signing key sealed under the cluster key. The signature names this
// node and is accepted once (cluster.JoinVerifier): a captured join cannot
// be replayed, here or to another member.

// joinInfo tells a joining node which node id to sign its join for, and
// which signature version this node accepts (a member that answers 404 or
// 405 here predates version 2 and takes cluster.SignJoinV1).
func (s *Server) joinInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"node_id": s.node.NodeID(), "join_auth": cluster.JoinAuthVersion})
}

// join serves POST /_/join.
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.joins.Verify(r.Header.Get(cluster.JoinAuthHeader), time.Now(), body); err != nil {
		s.writeError(w, r, s.joinRefusal(err))
		return
	}
	var j cluster.JoinRequest
	if err := json.Unmarshal(body, &j); err != nil || j.ID == "" || j.Addr == "" {
		s.writeError(w, r, engine.Errorf(engine.KindBadRequest, "A join needs {id, addr, voter}"))
		return
	}
	if err := s.node.Join(r.Context(), j); err != nil {
		s.writeError(w, r, err)
		return
	}
	var sealed []byte
	if s.secrets != nil {
		if sealed, err = cluster.Seal(s.clusterKey, s.secrets()); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"leader_id": s.node.LeaderID(), "secrets": sealed})
}

// joinRefusal is the answer to a join whose signature was refused.
func (s *Server) joinRefusal(err error) error {
	switch {
	case errors.Is(err, cluster.ErrJoinReplayed):
		return engine.Errorf(engine.KindConflict, "This join request was already used, or signed before this node started: "+
			"a signed join is accepted once (the joining node signs each attempt anew)")
	case errors.Is(err, cluster.ErrJoinOtherNode):
		return engine.Errorf(engine.KindForbidden, "This join request was signed for another node, not for %s", s.node.NodeID())
	case errors.Is(err, cluster.ErrJoinV1):
		return engine.Errorf(engine.KindForbidden, "This join request is signed the way nodes before join version %d sign it, "+
			"which could be replayed: upgrade the joining node", cluster.JoinAuthVersion)
	}
	return engine.Errorf(engine.KindForbidden, "The join request is not signed with the cluster key")
}
