package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/mcp"
)

// mcpBackend runs the agent protocol's tools as in-process REST calls
// through this server's own router: the same middleware (role table,
// scopes, audit, rate limits, body limits), handlers, rules and Raft path
// as a client's request, with the principal engine/mcp chose.
type mcpBackend struct{ s *Server }

// internalPrincipalKey carries the principal of an in-process call;
// authenticate takes it instead of reading credentials. Only code in this
// process can set a context value: no client can send one.
type internalPrincipalKey struct{}

// Do implements mcp.Backend.
func (b mcpBackend) Do(ctx context.Context, p engine.Principal, call mcp.Call) mcp.Reply {
	var body []byte
	if call.Body != nil {
		var err error
		if body, err = json.Marshal(call.Body); err != nil {
			return mcp.Reply{Status: http.StatusBadRequest, Body: json.RawMessage(`{"error":"arguments do not encode as JSON","code":400}`)}
		}
	}
	target := "/api/v1" + call.Path
	if len(call.Query) > 0 {
		target += "?" + call.Query.Encode()
	}
	// A fresh routing context: the outer request's (chi's, in ctx) would
	// make the router resume routing where the outer request stopped.
	inner := context.WithValue(context.WithValue(ctx, chi.RouteCtxKey, nil), internalPrincipalKey{}, p)
	req, err := http.NewRequestWithContext(inner, call.Method, target, bytes.NewReader(body))
	if err != nil {
		return mcp.Reply{Status: http.StatusBadRequest, Body: json.RawMessage(`{"error":"bad tool path","code":400}`)}
	}
	req.Header.Set("Content-Type", "application/json")
	if outer, ok := ctx.Value(outerRequestKey{}).(*http.Request); ok {
		req.RemoteAddr, req.Host = outer.RemoteAddr, outer.Host
		req.Header.Set("User-Agent", outer.UserAgent())
		if xff := outer.Header.Get("X-Forwarded-For"); xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		for _, h := range []string{"X-Svc-Consistency", "X-Svc-Min-Index"} {
			if v := outer.Header.Get(h); v != "" {
				req.Header.Set(h, v)
			}
		}
	}
	rec := &memResponse{header: http.Header{}}
	b.s.router.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return mcp.Reply{Status: rec.status, Body: rec.body.Bytes()}
}

// memResponse collects an in-process answer.
type memResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (m *memResponse) Header() http.Header { return m.header }

func (m *memResponse) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return m.body.Write(b)
}

func (m *memResponse) WriteHeader(code int) {
	if m.status == 0 {
		m.status = code
	}
}
