package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/internal/logfile"
)

// The request log: one JSON line per request in the node's log folder
// (internal/logfile, <data>/logs/YYYY-MM-DD.jsonl), written after the
// answer from the buffered writer, so a request never waits for the
// disk. A line names the caller by principal type and id, never by a
// credential; the query string keeps its parameters but not the values
// of those that name a secret (token=, password=, code=, ...).
//
// Every answer carries X-Request-Id: the client's when it sent a short
// printable one, else a new random id; the line records it.

// requestLine is one request in the log folder.
type requestLine struct {
	Time       time.Time      `json:"time"`
	Level      string         `json:"level"`
	Kind       string         `json:"kind"`
	Node       string         `json:"node"`
	Method     string         `json:"method"`
	Path       string         `json:"path"`
	Route      string         `json:"route,omitempty"`
	Status     int            `json:"status"`
	DurationMs float64        `json:"duration_ms"`
	Bytes      int64          `json:"bytes"`
	IP         string         `json:"ip"`
	Principal  *linePrincipal `json:"principal,omitempty"`
	RequestID  string         `json:"request_id"`
	Index      uint64         `json:"index,omitempty"`
}

// linePrincipal is the caller: its type and id.
type linePrincipal struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// callerSlot lets authenticate, deep in the chain, tell the request log
// who called.
type callerSlot struct{ p engine.Principal }

type callerSlotKey struct{}

// noteCaller records the authenticated caller for the request log.
func noteCaller(r *http.Request, p engine.Principal) {
	if slot, ok := r.Context().Value(callerSlotKey{}).(*callerSlot); ok {
		slot.p = p
	}
}

// countingRecorder remembers the status and counts the body bytes.
type countingRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (c *countingRecorder) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingRecorder) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(b)
	c.bytes += int64(n)
	return n, err
}

func (c *countingRecorder) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *countingRecorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// requestID is the client's X-Request-Id when short and printable, else
// a new one.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 {
		ok := true
		for _, c := range id {
			if c < '!' || c > '~' {
				ok = false
				break
			}
		}
		if ok {
			return id
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeRequestLog writes each request's line to the log folder.
func (s *Server) writeRequestLog(next http.Handler) http.Handler {
	if s.logs == nil {
		return next
	}
	node := s.node.NodeID()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		w.Header().Set("X-Request-Id", id)
		slot := &callerSlot{}
		rec := &countingRecorder{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), callerSlotKey{}, slot))
		next.ServeHTTP(rec, r)
		switch {
		case rec.status == 0 && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
			rec.status = http.StatusSwitchingProtocols // the connection was hijacked
		case rec.status == 0:
			rec.status = http.StatusOK
		}
		line := requestLine{Time: s.logs.Now(), Level: statusLevel(rec.status), Kind: "request", Node: node,
			Method: r.Method, Path: logPath(r), Status: rec.status, Bytes: rec.bytes, IP: s.clientIP(r), RequestID: id,
			DurationMs: float64(time.Since(start).Microseconds()) / 1000}
		if rc := chi.RouteContext(r.Context()); rc != nil {
			line.Route = rc.RoutePattern()
		}
		if p := slot.p; p.Kind != engine.Anonymous {
			line.Principal = &linePrincipal{Type: principalType(p), ID: p.ID}
		}
		if v := w.Header().Get("X-Svc-Index"); v != "" {
			line.Index, _ = strconv.ParseUint(v, 10, 64)
		}
		b, err := json.Marshal(line)
		if err != nil {
			return
		}
		_, _ = s.logs.Write(append(b, '\n'))
	})
}

// logPath is the path with the values of secret route parameters (a
// device {token}) and of the query string's secret parameters redacted.
func logPath(r *http.Request) string {
	path := r.URL.Path
	if rc := chi.RouteContext(r.Context()); rc != nil {
		for i, k := range rc.URLParams.Keys {
			if v := rc.URLParams.Values[i]; v != "" && logfile.SecretKey(k) {
				path = strings.ReplaceAll(path, v, logfile.Redacted)
			}
		}
	}
	path = logfile.Scrub(path)
	if r.URL.RawQuery == "" {
		return path
	}
	return path + "?" + logfile.ScrubQuery(r.URL.RawQuery)
}

// statusLevel is a request line's level: ERROR for 5xx, WARN for 4xx.
func statusLevel(status int) string {
	switch {
	case status >= 500:
		return "ERROR"
	case status >= 400:
		return "WARN"
	}
	return "INFO"
}

// principalType names a caller's kind: admin, api_token (an admin's API
// token), or user.
func principalType(p engine.Principal) string {
	switch {
	case p.Kind == engine.AdminPrincipal && p.Scopes != nil:
		return "api_token"
	case p.Kind == engine.AdminPrincipal:
		return "admin"
	}
	return "user"
}

// serverWriter unwraps w down to the server's own ResponseWriter:
// http.MaxBytesReader tells that one (by an unexported method) to close
// the connection after a body over the limit, which a wrapper such as
// countingRecorder cannot pass on.
func serverWriter(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}
