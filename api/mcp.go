package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/mcp"
)

// The agent protocol's transport: Streamable HTTP as revision 2025-06-18
// defines it. POST /mcp carries one JSON-RPC message and is answered with
// JSON (or one SSE event when the client accepts only text/event-stream);
// GET /mcp and GET /mcp/events open the server-to-client SSE stream. The
// protocol itself is engine/mcp's.
//
//	POST /api/v1/mcp          one JSON-RPC message
//	GET  /api/v1/mcp          server-to-client SSE stream
//	GET  /api/v1/mcp/events   the same stream (SPEC.md's path)
//
// DELETE is 405: sessions are stateless (signed ids any node verifies),
// so there is nothing to end.

// AgentProtocol is what the transport needs of engine/mcp.
type AgentProtocol interface {
	Handle(ctx context.Context, c mcp.Caller, m mcp.Message) []byte
	Stamp() string
}

// readOnlyHeader is how the stdio bridge asks for --read-only: it can
// only narrow what the token may do.
const readOnlyHeader = "X-Svc-Mcp-Read-Only"

var (
	errMCPToken   = engine.Errorf(engine.KindForbidden, "The agent protocol needs an API token with an mcp:* scope")
	errMCPOrigin  = engine.Errorf(engine.KindForbidden, "Origin not allowed for the agent protocol (cors.origins)")
	errMCPVersion = engine.Errorf(engine.KindBadRequest, "Unsupported MCP-Protocol-Version (this server speaks "+mcp.ProtocolVersion+")")
	errMCPSession = engine.Errorf(engine.KindNotFound, "Unknown or expired Mcp-Session-Id: initialize again")
	errMCPAccept  = engine.Errorf(engine.KindBadRequest, "The MCP stream needs Accept: text/event-stream")
)

func (s *Server) mountMCP(r chi.Router) {
	r.Post("/mcp", s.mcpPost)
	r.Get("/mcp", s.untilDrain(s.mcpStream))
	r.Get("/mcp/events", s.untilDrain(s.mcpStream))
}

// mcpCaller checks what every MCP request must pass (Origin, an API token
// with an mcp scope, the protocol version, the session) and answers the
// caller, or writes the refusal and answers ok false.
func (s *Server) mcpCaller(w http.ResponseWriter, r *http.Request, initialize bool) (mcp.Caller, bool) {
	if !s.mcpOriginAllowed(r) {
		s.writeError(w, r, errMCPOrigin)
		return mcp.Caller{}, false
	}
	p := principal(r)
	if p.Kind == engine.Anonymous {
		s.writeError(w, r, errAuthRequired)
		return mcp.Caller{}, false
	}
	if !mcp.IsAgent(p) {
		s.writeError(w, r, errMCPToken)
		return mcp.Caller{}, false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !mcp.SupportedVersion(v) {
		s.writeError(w, r, errMCPVersion)
		return mcp.Caller{}, false
	}
	// A session id is optional (a stateless client, curl, may omit it); one
	// sent must be one this cluster issued to this token.
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && !initialize && !s.mcpSessions.valid(id, p.TokenID) {
		s.writeError(w, r, errMCPSession)
		return mcp.Caller{}, false
	}
	return mcp.Caller{Principal: p, ReadOnly: settingTrue(r.Header.Get(readOnlyHeader))}, true
}

// mcpOriginAllowed guards against DNS rebinding (the revision's MUST): a
// request without Origin (not a browser) passes; a browser's must be
// app.url's origin, listed in cors.origins, or a loopback origin talking
// to a loopback address. The Host header alone proves nothing (a rebound
// name sends its own).
func (s *Server) mcpOriginAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if app, err := url.Parse(s.settings.Setting("app.url")); err == nil && app.Host != "" &&
		strings.EqualFold(app.Scheme+"://"+app.Host, origin) {
		return true
	}
	if isLoopbackHost(u.Hostname()) && isLoopbackHost(hostOnly(r.Host)) {
		return true
	}
	for _, o := range strings.Split(s.settings.Setting("cors.origins"), ",") {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		if o == "*" || (o != "" && strings.EqualFold(o, origin)) {
			return true
		}
	}
	return false
}

func hostOnly(hostport string) string {
	u := url.URL{Host: hostport}
	return u.Hostname()
}

func isLoopbackHost(h string) bool {
	switch strings.ToLower(h) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// outerRequestKey carries the MCP request into the Backend's inner calls
// (client address, user agent).
type outerRequestKey struct{}

func (s *Server) mcpPost(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	msg, refusal := mcp.Parse(body)
	if refusal != nil {
		if !s.mcpOriginAllowed(r) {
			s.writeError(w, r, errMCPOrigin)
			return
		}
		writeBytesJSON(w, http.StatusBadRequest, refusal)
		return
	}
	initialize := msg.Method() == "initialize"
	c, ok := s.mcpCaller(w, r, initialize)
	if !ok {
		return
	}
	ctx := context.WithValue(r.Context(), outerRequestKey{}, r)
	out := s.mcp.Handle(ctx, c, msg)
	if out == nil {
		w.WriteHeader(http.StatusAccepted) // a notification or a response
		return
	}
	if initialize {
		w.Header().Set("Mcp-Session-Id", s.mcpSessions.issue(c.Principal.TokenID))
	}
	accept := r.Header.Get("Accept")
	if strings.Contains(accept, "text/event-stream") && !strings.Contains(accept, "application/json") {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(appendSSEFrame(nil, "", "message", out))
		return
	}
	writeBytesJSON(w, http.StatusOK, out)
}

func writeBytesJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}

// mcpStream is the server-to-client stream: keep-alive comments, and
// notifications/tools/list_changed when the collections (hence the tool
// registry) change.
func (s *Server) mcpStream(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.mcpCaller(w, r, false); !ok {
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		s.writeError(w, r, errMCPAccept)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte(": mcp stream open\n\n")) {
		return
	}
	stamp := s.mcp.Stamp()
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	keep := time.NewTicker(s.sseKeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		case <-poll.C:
			now := s.mcp.Stamp()
			if now == stamp {
				continue
			}
			stamp = now
			frame := appendSSEFrame(nil, "", "message", mcpListChanged)
			if !write(frame) {
				return
			}
		}
	}
}

var mcpListChanged = []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
