package pbcompat

import (
	"context"
	"net/http"
	"strings"

	"svcd/engine"
)

type principalKey struct{}

// authToken is the token of a request: Authorization's value, raw (the
// SDK's form) or after a case-insensitive "Bearer " (pb:apis/middlewares.go
// getAuthTokenFromRequest).
func authToken(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		h = strings.TrimSpace(h[7:])
	}
	return h
}

// authenticate resolves the caller from the Authorization header. Unlike
// /api/v1, a bad, expired or revoked token is not an error: the request
// goes on as a guest, and the route decides (PocketBase's loadAuthToken).
func (d *Deps) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p engine.Principal
		if tok := authToken(r); tok != "" && d.Authn != nil {
			if got, err := d.Authn.Authenticate(r.Context(), tok); err == nil {
				p = got
			}
		}
		r = r.WithContext(WithPrincipal(r.Context(), p))
		if d.Bind != nil {
			r = d.Bind(r, p)
		}
		next.ServeHTTP(w, r)
	})
}

// WithPrincipal returns ctx carrying p as the caller.
func WithPrincipal(ctx context.Context, p engine.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Principal is the caller of a compat request (anonymous when it sent no
// usable token).
func Principal(r *http.Request) engine.Principal {
	p, _ := r.Context().Value(principalKey{}).(engine.Principal)
	return p
}

// RequireAuth answers 401 (PocketBase's "requires valid record
// authorization token") for a guest.
func RequireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Principal(r).Kind == engine.Anonymous {
			WriteError(w, r, NewError(http.StatusUnauthorized, MsgAuthRequired, nil))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// RequireSuperuser answers 401 for a guest and 403 for a caller who is not
// a svcd admin (PocketBase's superusers), with PocketBase's messages
// (pb:apis/middlewares.go RequireSuperuserAuth, which is
// requireAuth("_superusers")).
func RequireSuperuser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := Principal(r)
		switch {
		case p.Kind == engine.Anonymous:
			WriteError(w, r, NewError(http.StatusUnauthorized, MsgAuthRequired, nil))
		case !p.IsAdmin():
			WriteError(w, r, NewError(http.StatusForbidden, MsgNotAllowed, nil))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// recordCaller is the caller of a record route with what rules may read of
// the request: an admin whose role does not reach app data is a guest
// there (as on /api/v1).
func (d *Deps) recordCaller(r *http.Request) engine.Principal {
	p := Principal(r)
	if p.IsAdmin() && p.Role < d.RecordRole {
		p = engine.Principal{}
	}
	p.Request = RequestInfo(r)
	return p
}

// RequestInfo is what @request.* may read: the method, headers (lower
// case, '-' as '_', credentials left out) and the first value of each
// query parameter (the same as /api/v1's).
func RequestInfo(r *http.Request) engine.RequestInfo {
	info := engine.RequestInfo{Method: r.Method, Context: "default",
		Headers: make(map[string]string, len(r.Header)), Query: map[string]string{}}
	for k, v := range r.Header {
		key := strings.ReplaceAll(strings.ToLower(k), "-", "_")
		switch key {
		case "authorization", "cookie", "x_setup_key":
			continue
		}
		if len(v) > 0 {
			info.Headers[key] = v[0]
		}
	}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			info.Query[k] = v[0]
		}
	}
	return info
}
