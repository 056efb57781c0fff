package api

import (
	"context"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"svcd/engine"
)

var (
	errRouteNotFound    = engine.Errorf(engine.KindNotFound, "The requested resource wasn't found")
	errMethodNotAllowed = engine.Errorf(engine.KindMethodNotAllowed, "Method not allowed")
	errAuthRequired     = engine.Errorf(engine.KindUnauthorized, "Authentication required")
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

// logRequests logs each request at debug level: method, path (never the
// query string, which may carry tokens), status and duration.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.log.Enabled(r.Context(), -4) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "dur", time.Since(start))
	})
}

type principalKey struct{}

// principal returns the caller of r (anonymous when unauthenticated).
func principal(r *http.Request) engine.Principal {
	p, _ := r.Context().Value(principalKey{}).(engine.Principal)
	return p
}

// credential returns the bearer token or the auth cookie of r.
func credential(r *http.Request) (tok string, fromHeader bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:]), true
		}
		return "", true
	}
	if c, err := r.Cookie(adminCookie); err == nil {
		return c.Value, false
	}
	return "", false
}

// authenticate resolves the caller. A bad Authorization header is a 401; a
// stale cookie is ignored (the caller is anonymous).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, fromHeader := credential(r)
		if tok == "" && !fromHeader {
			next.ServeHTTP(w, r)
			return
		}
		p, err := s.eng.AuthenticateAdmin(tok)
		if err != nil {
			if fromHeader {
				s.writeError(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
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
		if p.Role < requiredRole(r.Method, r.URL.Path) {
			s.writeError(w, r, errRoleTooLow)
			return
		}
		next.ServeHTTP(w, r)
	})
}

var errNotReady = &engine.Error{Kind: engine.KindUnavailable, Message: "The node is starting: it has not replayed its log yet", RetryAfter: 1}

// requireCaughtUp answers 503 until this replica has replayed the log it
// held at start and migrated its internal schema: before that, a read could
// miss writes this node acknowledged before a restart.
func (s *Server) requireCaughtUp(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.node.CaughtUp() || !s.eng.Migrated() {
			s.writeError(w, r, errNotReady)
			return
		}
		next.ServeHTTP(w, r)
	})
}
