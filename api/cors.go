package api

import (
	"net/http"
	"strconv"
	"strings"

	"svcd/engine"
)

// CORS (SPEC.md "Configuration": cors.*). The middleware sits early in the
// root chain, before the rate limiter and the router, so it covers every
// route: /api/v1, the legacy /api/collections records, /realtime and the /_/
// probes. Settings are read on every request, so a PATCH of cors.* takes
// effect at once.
//
//   - cors.origins: comma list of origins (scheme://host[:port]); "*" allows
//     any. Empty (the default) allows none: no CORS header is ever sent.
//   - cors.credentials: "1" adds Access-Control-Allow-Credentials: true; the
//     origin is then always echoed, never "*".
//   - cors.methods, cors.headers: the preflight's allowed methods and
//     headers; empty means corsDefaultMethods and the requested headers that
//     corsHeaderAllowed accepts.
//   - cors.max_age: preflight cache lifetime in seconds (default 600).
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) never
// reaches the handlers or the rate limiter: an allowed origin gets 204 with
// the preflight headers, any other (every origin while cors.origins is
// empty) a 403 envelope without CORS headers, so the browser refuses the
// actual request.

// corsDefaultMethods is Access-Control-Allow-Methods when cors.methods is
// empty: every method the API serves.
const corsDefaultMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"

// corsExposed are the response headers a cross-origin script may read:
// the record version, the Raft index and node of a write, the back-off of a
// 429 or 503, the challenge of a 401, why a list dropped its filter or
// sort terms, and the request id the logs name (to report a failure).
const corsExposed = "ETag, Retry-After, WWW-Authenticate, X-Svc-Index, X-Svc-Node, X-Svc-Filter-Error, X-Svc-Sort-Error, X-Request-Id"

// corsDefaultMaxAge is cors.max_age when it is unset or malformed.
const corsDefaultMaxAge = "600"

// corsMaxRequestHeaders bounds how many requested headers a preflight echoes.
const corsMaxRequestHeaders = 32

// corsSafeHeaders are the request headers echoed in a preflight answer when
// cors.headers is empty (besides any X-Svc-* header).
var corsSafeHeaders = map[string]bool{
	"accept": true, "accept-language": true, "authorization": true, "cache-control": true,
	"content-language": true, "content-type": true, "if-match": true, "if-none-match": true,
	"last-event-id": true, "x-request-id": true, "x-requested-with": true, "x-setup-key": true,
}

var errCORSOrigin = engine.Errorf(engine.KindForbidden, "Origin not allowed (cors.origins)")

// corsPolicy is the cors.* settings as read for one request.
type corsPolicy struct {
	any         bool // "*" listed
	origins     []string
	credentials bool
}

func (s *Server) corsPolicy() (corsPolicy, bool) {
	raw := strings.TrimSpace(s.settings.Setting("cors.origins"))
	if raw == "" {
		return corsPolicy{}, false
	}
	p := corsPolicy{credentials: settingTrue(s.settings.Setting("cors.credentials"))}
	for _, o := range strings.Split(raw, ",") {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		switch o {
		case "":
		case "*":
			p.any = true
		default:
			p.origins = append(p.origins, o)
		}
	}
	return p, p.any || len(p.origins) > 0
}

// allows reports whether origin may read answers.
func (p corsPolicy) allows(origin string) bool {
	if p.any {
		return true
	}
	for _, o := range p.origins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// wildcard: the answer is the same for every origin ("*", no credentials).
func (p corsPolicy) wildcard() bool { return p.any && !p.credentials }

func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		p, on := s.corsPolicy()
		if !on {
			if preflight && r.Header.Get("Origin") != "" {
				s.writeError(w, r, errCORSOrigin)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		if !p.wildcard() {
			// The answer depends on Origin even when none was sent: a
			// shared cache must not serve it to another origin.
			h.Add("Vary", "Origin")
		}
		origin := r.Header.Get("Origin")
		if origin == "" || !p.allows(origin) {
			if preflight && origin != "" {
				s.writeError(w, r, errCORSOrigin)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if p.wildcard() {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
		}
		if p.credentials {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		if !preflight {
			h.Set("Access-Control-Expose-Headers", corsExposed)
			next.ServeHTTP(w, r)
			return
		}
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		methods := strings.TrimSpace(s.settings.Setting("cors.methods"))
		if methods == "" {
			methods = corsDefaultMethods
		}
		h.Set("Access-Control-Allow-Methods", methods)
		if allowed := s.corsAllowHeaders(r); allowed != "" {
			h.Set("Access-Control-Allow-Headers", allowed)
		}
		maxAge := strings.TrimSpace(s.settings.Setting("cors.max_age"))
		if n, err := strconv.Atoi(maxAge); err != nil || n < 0 {
			maxAge = corsDefaultMaxAge
		}
		h.Set("Access-Control-Max-Age", maxAge)
		w.WriteHeader(http.StatusNoContent)
	})
}

// corsAllowHeaders is Access-Control-Allow-Headers: cors.headers when set,
// else the requested headers that corsHeaderAllowed accepts.
func (s *Server) corsAllowHeaders(r *http.Request) string {
	if v := strings.TrimSpace(s.settings.Setting("cors.headers")); v != "" {
		return v
	}
	var out []string
	for _, line := range r.Header.Values("Access-Control-Request-Headers") {
		for _, name := range strings.Split(line, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if len(out) < corsMaxRequestHeaders && corsHeaderAllowed(name) {
				out = append(out, name)
			}
		}
	}
	return strings.Join(out, ", ")
}

// corsHeaderAllowed: a header name (lower case) a preflight may be granted
// without cors.headers: one of corsSafeHeaders or any x-svc-* token.
func corsHeaderAllowed(name string) bool {
	if corsSafeHeaders[name] {
		return true
	}
	if !strings.HasPrefix(name, "x-svc-") || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// settingTrue reads a boolean setting that defaults to off.
func settingTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on", "yes":
		return true
	}
	return false
}
