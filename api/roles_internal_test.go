package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"svcd/engine"
)

// TestRequiredRole walks the role table row by row (SPEC.md: viewer reads
// schema and metrics; editor adds app data; developer adds collection
// schema; owner adds settings; unknown control-plane paths are owner-only).
func TestRequiredRole(t *testing.T) {
	cases := []struct {
		method, path string
		want         engine.Role
	}{
		{http.MethodGet, "/api/v1/admin/settings", engine.RoleOwner},
		{http.MethodHead, "/api/v1/admin/settings", engine.RoleOwner},
		{http.MethodPatch, "/api/v1/admin/settings", engine.RoleOwner},

		{http.MethodGet, "/api/v1/admin/collections", engine.RoleViewer},
		{http.MethodHead, "/api/v1/admin/collections", engine.RoleViewer},
		{http.MethodGet, "/api/v1/admin/collections/posts", engine.RoleViewer},
		{http.MethodPost, "/api/v1/admin/collections", engine.RoleDeveloper},
		{http.MethodPatch, "/api/v1/admin/collections/posts", engine.RoleDeveloper},
		{http.MethodPut, "/api/v1/admin/collections/posts", engine.RoleDeveloper},
		{http.MethodDelete, "/api/v1/admin/collections/posts", engine.RoleDeveloper},

		{http.MethodGet, "/api/v1/admin/cluster", engine.RoleViewer},
		{http.MethodPost, "/api/v1/admin/cluster/snapshot", engine.RoleOwner},
		{http.MethodGet, "/api/v1/admin/cluster/digest", engine.RoleOwner},

		{http.MethodGet, "/api/v1/_/metrics", engine.RoleViewer},
		{http.MethodPost, "/api/v1/_/metrics", engine.RoleViewer},

		{http.MethodGet, "/api/v1/admin/notifications/providers", engine.RoleDeveloper},
		{http.MethodPatch, "/api/v1/admin/notifications/providers/fcm", engine.RoleOwner},
		{http.MethodPost, "/api/v1/admin/notifications/providers/fcm/test-connection", engine.RoleOwner},
		{http.MethodPost, "/api/v1/admin/notifications/test", engine.RoleOwner},

		{http.MethodGet, recordsScope, engine.RoleEditor},
		{http.MethodPost, recordsScope, engine.RoleEditor},
		{http.MethodPatch, recordsScope, engine.RoleEditor},
		{http.MethodPut, recordsScope, engine.RoleEditor},
		{http.MethodDelete, recordsScope, engine.RoleEditor},

		// Anything else on the control plane is closed by default.
		{http.MethodGet, "/api/v1/admin/admins", engine.RoleOwner},
		{http.MethodPost, "/api/v1/admin/backups", engine.RoleOwner},
		{http.MethodGet, "/api/v1/_/other", engine.RoleOwner},
		{http.MethodGet, "/", engine.RoleOwner},
	}
	for _, c := range cases {
		if got := requiredRole(c.method, c.path); got != c.want {
			t.Errorf("requiredRole(%s, %s) = %v, want %v", c.method, c.path, got, c.want)
		}
	}
}

// TestRoleOrder: each role includes the ones below it.
func TestRoleOrder(t *testing.T) {
	order := []engine.Role{engine.RoleNone, engine.RoleViewer, engine.RoleEditor, engine.RoleDeveloper, engine.RoleOwner}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Errorf("%v is not above %v", order[i], order[i-1])
		}
	}
	for _, name := range []string{"viewer", "editor", "developer", "owner"} {
		if engine.ParseRole(name).String() != name {
			t.Errorf("role %q does not round-trip", name)
		}
	}
	if engine.ParseRole("root") != engine.RoleNone || engine.ParseRole("") != engine.RoleNone {
		t.Error("unknown role names must parse as RoleNone")
	}
}

func testServer() *Server {
	return &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func withPrincipal(r *http.Request, p engine.Principal) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

func admin(role engine.Role) engine.Principal {
	return engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_x", Role: role}
}

// TestRequireRoleMiddleware drives the middleware with principals of every
// kind and role.
func TestRequireRoleMiddleware(t *testing.T) {
	s := testServer()
	h := s.requireRole(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	cases := []struct {
		name         string
		p            engine.Principal
		method, path string
		want         int
	}{
		{"anonymous", engine.Principal{}, http.MethodGet, "/api/v1/admin/collections", http.StatusUnauthorized},
		{"user", engine.Principal{Kind: engine.User, ID: "u"}, http.MethodGet, "/api/v1/admin/collections", http.StatusForbidden},
		{"admin without a known role", admin(engine.RoleNone), http.MethodGet, "/api/v1/admin/collections", http.StatusForbidden},
		{"viewer reads collections", admin(engine.RoleViewer), http.MethodGet, "/api/v1/admin/collections", http.StatusTeapot},
		{"viewer cannot create collections", admin(engine.RoleViewer), http.MethodPost, "/api/v1/admin/collections", http.StatusForbidden},
		{"editor cannot create collections", admin(engine.RoleEditor), http.MethodPost, "/api/v1/admin/collections", http.StatusForbidden},
		{"developer creates collections", admin(engine.RoleDeveloper), http.MethodPost, "/api/v1/admin/collections", http.StatusTeapot},
		{"developer deletes collections", admin(engine.RoleDeveloper), http.MethodDelete, "/api/v1/admin/collections/x", http.StatusTeapot},
		{"developer cannot read settings", admin(engine.RoleDeveloper), http.MethodGet, "/api/v1/admin/settings", http.StatusForbidden},
		{"owner reads settings", admin(engine.RoleOwner), http.MethodGet, "/api/v1/admin/settings", http.StatusTeapot},
		{"owner patches settings", admin(engine.RoleOwner), http.MethodPatch, "/api/v1/admin/settings", http.StatusTeapot},
		{"viewer reads metrics", admin(engine.RoleViewer), http.MethodGet, "/api/v1/_/metrics", http.StatusTeapot},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, withPrincipal(httptest.NewRequest(c.method, c.path, nil), c.p))
		if rec.Code != c.want {
			t.Errorf("%s: %s %s = %d, want %d (%s)", c.name, c.method, c.path, rec.Code, c.want, rec.Body)
		}
	}
}

// TestRecordCaller: an admin below editor is anonymous on record routes
// (the collection's rules decide); other callers pass through unchanged.
func TestRecordCaller(t *testing.T) {
	user := engine.Principal{Kind: engine.User, ID: "u1"}
	cases := []struct {
		p      engine.Principal
		method string
		want   engine.Principal
	}{
		{engine.Principal{}, http.MethodGet, engine.Principal{}},
		{engine.Principal{}, http.MethodPost, engine.Principal{}},
		{user, http.MethodDelete, user},
		{admin(engine.RoleNone), http.MethodGet, engine.Principal{}},
		{admin(engine.RoleViewer), http.MethodGet, engine.Principal{}},
		{admin(engine.RoleViewer), http.MethodPatch, engine.Principal{}},
		{admin(engine.RoleEditor), http.MethodGet, admin(engine.RoleEditor)},
		{admin(engine.RoleEditor), http.MethodDelete, admin(engine.RoleEditor)},
		{admin(engine.RoleOwner), http.MethodPost, admin(engine.RoleOwner)},
	}
	for _, c := range cases {
		req := withPrincipal(httptest.NewRequest(c.method, "/api/v1/posts?q=1", nil), c.p)
		req.Header.Set("Authorization", "Bearer secret")
		req.Header.Set("X-Trace-Id", "t1")
		got := recordCaller(req)
		if got.Request.Method != c.method || got.Request.Query["q"] != "1" || got.Request.Headers["x_trace_id"] != "t1" {
			t.Errorf("%s: request info %+v", c.method, got.Request)
		}
		if _, leaked := got.Request.Headers["authorization"]; leaked {
			t.Errorf("the Authorization header reached the rules")
		}
		got.Request = engine.RequestInfo{}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v %s: got %+v, want %+v", c.p, c.method, got, c.want)
		}
	}
}

// TestCredential: the bearer header wins, then the admin cookie.
func TestCredential(t *testing.T) {
	cases := []struct {
		header, cookie string
		tok            string
		fromHeader     bool
	}{
		{"", "", "", false},
		{"Bearer abc", "", "abc", true},
		{"bearer   abc  ", "", "abc", true},
		{"BEARER abc", "cookie", "abc", true},
		{"Basic abc", "cookie", "", true},
		{"Bearer", "", "", true},
		{"", "fromcookie", "fromcookie", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		if c.cookie != "" {
			r.AddCookie(&http.Cookie{Name: adminCookie, Value: c.cookie})
		}
		toks, fromHeader := requestTokens(r)
		tok := ""
		if len(toks) > 0 {
			tok = toks[0]
		}
		if tok != c.tok || fromHeader != c.fromHeader {
			t.Errorf("header %q cookie %q: got (%q, %v), want (%q, %v)", c.header, c.cookie, tok, fromHeader, c.tok, c.fromHeader)
		}
	}
}
