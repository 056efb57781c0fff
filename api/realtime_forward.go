package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"svcd/api/pbcompat"
	"svcd/engine"
	"svcd/realtime"
)

// PocketBase's realtime across the cluster: a client id starts with its
// node's realtime.NodePrefix, and a subscription POST that reaches another
// member (a load balancer) is sent on to the member that holds the stream
// over the members' HTTP addresses, as ?node=all gathers logs. The caller's
// own Authorization goes with it and the owner authenticates it again:
// the forwarding member vouches for nothing, so the route needs no
// signature. pbcompat.ForwardedHeader keeps it from going further.

// realtimeForwardTimeout bounds the owner's answer.
const realtimeForwardTimeout = 10 * time.Second

// pbRealtime is pbcompat.RealtimeNode over the server.
type pbRealtime struct{ s *Server }

// Conn is the credential and options of a stream, as on /api/v1/realtime.
func (p pbRealtime) Conn(r *http.Request) (engine.Principal, realtime.ConnOptions) {
	return realtimeCredential(r), realtime.ConnOptions{ReadAs: realtimeReader, Mark: realtimeMarkOf(r)}
}

// KeepAlive is Options.SSEKeepAlive.
func (p pbRealtime) KeepAlive() time.Duration { return p.s.sseKeepAlive }

// Forward sends the POST to the member whose prefix the client id has.
func (p pbRealtime) Forward(w http.ResponseWriter, r *http.Request, prefix string, body []byte) bool {
	s := p.s
	servers, err := s.node.Servers()
	if err != nil {
		return false
	}
	owner := ""
	for _, srv := range servers {
		if srv.ID != s.node.NodeID() && realtime.NodePrefix(srv.ID) == prefix {
			owner = srv.ID
		}
	}
	if owner == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(r.Context(), realtimeForwardTimeout)
	defer cancel()
	addr := s.node.MemberHTTPAddr(ctx, owner)
	if addr == "" {
		return false
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set(pbcompat.ForwardedHeader, s.node.NodeID())
	req.Header.Set("Content-Type", "application/json")
	if a := r.Header.Get("Authorization"); a != "" {
		req.Header.Set("Authorization", a)
	}
	res, err := s.peers.Do(req)
	if err != nil {
		pbcompat.WriteError(w, r, pbcompat.NewError(http.StatusBadGateway, "The node that holds the realtime client did not answer.", nil))
		return true
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if ct := res.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(out)
	return true
}

// pbRealtimeMark is realtimeMark for PocketBase's realtime path: the
// hub's credential mark is read before the layer authenticates the
// caller (the other paths of the layer need none).
func (s *Server) pbRealtimeMark(next http.Handler) http.Handler {
	marked := s.realtimeMark(next)
	stream := s.untilDrain(marked.ServeHTTP)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.rt != nil && r.URL.Path == "/api/realtime" {
			if r.Method == http.MethodGet {
				stream(w, r) // the stream ends when the node drains
				return
			}
			marked.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
