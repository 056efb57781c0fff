package api

import (
	"context"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"svcd/engine"
	"svcd/internal/tracing"
)

// Authenticator turns a request's credential into its principal
// (engine/auth).
type Authenticator interface {
	Authenticate(ctx context.Context, raw string) (engine.Principal, error)
}

var (
	errRouteNotFound    = engine.Errorf(engine.KindNotFound, "The requested resource wasn't found")
	errMethodNotAllowed = engine.Errorf(engine.KindMethodNotAllowed, "Method not allowed")
	errAuthRequired     = engine.Errorf(engine.KindUnauthorized, "Authentication required")
	errBadAuthHeader    = engine.Errorf(engine.KindUnauthorized, "The Authorization header must be \"Bearer <token>\"")
	errRoleTooLow       = engine.Errorf(engine.KindForbidden, "Your admin role does not allow this action")
	errAdminRequired    = engine.Errorf(engine.KindForbidden, "Only admins can perform this action")
)

func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				s.writeError(w, r, engine.Errorf(engine.KindInternal, "Something went wrong while processing the request"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) nodeHeader(next http.Handler) http.Handler {
	id := s.node.NodeID()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Svc-Node", id)
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logRequests logs each request at debug level: method, path (secret
// route parameters and query values redacted: request_log.go), status
// and duration.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.log.Enabled(r.Context(), -4) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.log.Debug("request", "method", r.Method, "path", logPath(r), "status", rec.status, "dur", time.Since(start))
	})
}

type principalKey struct{}

// principal returns the caller of r (anonymous when unauthenticated).
func principal(r *http.Request) engine.Principal {
	p, _ := r.Context().Value(principalKey{}).(engine.Principal)
	return p
}

// requestTokens returns the bearer token of r, or its auth cookies (admin
// first). fromHeader is set when an Authorization header was sent: then
// only it counts.
func requestTokens(r *http.Request) (toks []string, fromHeader bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return []string{strings.TrimSpace(h[7:])}, true
		}
		return nil, true
	}
	for _, name := range []string{adminCookie, userCookie} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			toks = append(toks, c.Value)
		}
	}
	return toks, false
}

// authenticate resolves the caller. A bad Authorization header is a 401; a
// stale cookie is ignored (the caller is anonymous).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An in-process call of the agent protocol (mcp_backend.go)
		// carries its principal.
		if p, ok := r.Context().Value(internalPrincipalKey{}).(engine.Principal); ok {
			noteCaller(r, p)
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
			return
		}
		_, span := tracing.Phase(r.Context(), "auth")
		toks, fromHeader := requestTokens(r)
		if fromHeader && len(toks) == 0 {
			span.End()
			s.writeError(w, r, errBadAuthHeader)
			return
		}
		for _, tok := range toks {
			p, err := s.authn.Authenticate(r.Context(), tok)
			if err == nil {
				noteCaller(r, p)
				span.End()
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
				return
			}
			if fromHeader {
				span.End()
				s.writeError(w, r, err)
				return
			}
		}
		span.End()
		next.ServeHTTP(w, r)
	})
}

// requireSignedIn refuses an anonymous caller with 401 before the handler
// runs, so routes that act for a signed-in caller never read an
// anonymous body.
func (s *Server) requireSignedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if principal(r).Kind == engine.Anonymous {
			s.writeError(w, r, errAuthRequired)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireRole enforces the role table on control-plane routes.
func (s *Server) requireRole(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		if !p.IsAdmin() {
			if p.Kind == engine.Anonymous {
				s.writeError(w, r, errAuthRequired)
			} else {
				s.writeError(w, r, errAdminRequired)
			}
			return
		}
		if !p.HasAdminScope() {
			s.writeError(w, r, engine.ErrInsufficientScope)
			return
		}
		if p.Role < requiredRole(r.Method, r.URL.Path) {
			s.writeError(w, r, errRoleTooLow)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireRecordScope refuses an API token whose scopes do not cover the
// collection of a record route (SPEC.md: 403 'Insufficient token scope').
func (s *Server) requireRecordScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		write := r.Method != http.MethodGet && r.Method != http.MethodHead
		if !p.HasScope(recordCollection(r.URL.Path), write) {
			s.writeError(w, r, engine.ErrInsufficientScope)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// recordCollection is the collection segment of a record route:
// /api/v1/<collection>[/<id>] or /api/collections/<collection>/records.
func recordCollection(path string) string {
	rest, ok := strings.CutPrefix(path, "/api/v1/")
	if !ok {
		rest, _ = strings.CutPrefix(path, "/api/collections/")
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

var errNotReady = &engine.Error{Kind: engine.KindUnavailable, Message: "The node is starting: it has not replayed its log yet", RetryAfter: 1}

// requireCaughtUp answers 503 until this replica has replayed the log it
// held at start and migrated its internal schema: before that, a read could
// miss writes this node acknowledged before a restart.
func (s *Server) requireCaughtUp(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.node.CaughtUp() || !s.migrations.Migrated() {
			s.writeError(w, r, errNotReady)
			return
		}
		next.ServeHTTP(w, r)
	})
}
