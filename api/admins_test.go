package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

const adminPassword = "admin-password-123"

// newAdmin creates an admin of role through the owner and signs in as it.
func newAdmin(t testing.TB, s *apitest.Server, email, role string) (id, tok string) {
	t.Helper()
	a := apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, "POST", "/api/v1/admin/admins", map[string]any{"email": email, "password": adminPassword, "role": role})["data"])
	res, body := s.Do(t, "POST", "/api/v1/admin/auth/login", map[string]any{"email": email, "password": adminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login %s: %d %s", email, res.StatusCode, body)
	}
	return a["id"].(string), apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
}

func TestAdminManagement(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	owner := s.AdminToken(t)
	ownerID := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(owner)))["data"])["id"].(string)

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "create defaults to editor", Method: "POST", URL: "/api/v1/admin/admins", Admin: true,
			Body:           map[string]any{"email": "ed@example.com", "password": adminPassword},
			ExpectedStatus: http.StatusCreated, ExpectedContent: []string{`"role":"editor"`, `"email":"ed@example.com"`},
			NotExpectedContent: []string{"password"}},
		{Name: "create with a taken email is 422", Method: "POST", URL: "/api/v1/admin/admins", Admin: true,
			Body:           map[string]any{"email": "ED@example.com", "password": adminPassword},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("email")},
		{Name: "create with an unknown role is 422", Method: "POST", URL: "/api/v1/admin/admins", Admin: true,
			Body:           map[string]any{"email": "x@example.com", "password": adminPassword, "role": "god"},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("role")},
		{Name: "list shows every admin with its role", Method: "GET", URL: "/api/v1/admin/admins", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"email":"ed@example.com"`, `"role":"owner"`}},
		{Name: "the last owner cannot be demoted", Method: "PATCH", URL: "/api/v1/admin/admins/" + ownerID, Admin: true,
			Body: map[string]any{"role": "editor"}, ExpectedStatus: http.StatusConflict},
		{Name: "the last owner cannot be deleted", Method: "DELETE", URL: "/api/v1/admin/admins/" + ownerID, Admin: true,
			ExpectedStatus: http.StatusConflict},
		{Name: "an unknown admin is 404", Method: "PATCH", URL: "/api/v1/admin/admins/adm_nope", Admin: true,
			Body: map[string]any{"role": "viewer"}, ExpectedStatus: http.StatusNotFound},
	})

	t.Run("a second owner makes the first removable; role changes apply on the next request", func(t *testing.T) {
		id2, tok2 := newAdmin(t, s, "own2@example.com", "owner")
		if res, _ := s.Do(t, "GET", "/api/v1/admin/settings", nil, bearer(tok2)); res.StatusCode != http.StatusOK {
			t.Fatalf("new owner on settings: %d", res.StatusCode)
		}
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+id2, map[string]any{"role": "viewer"})
		if res, _ := s.Do(t, "GET", "/api/v1/admin/settings", nil, bearer(tok2)); res.StatusCode != http.StatusForbidden {
			t.Fatalf("demoted admin on settings: %d", res.StatusCode)
		}
		if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(tok2)); res.StatusCode != http.StatusOK {
			t.Fatalf("viewer on collections: %d", res.StatusCode)
		}
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/admins/"+id2, nil)
		if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(tok2)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("deleted admin's token: %d", res.StatusCode)
		}
	})

	t.Run("a password change signs the admin out", func(t *testing.T) {
		id, tok := newAdmin(t, s, "pw@example.com", "viewer")
		clock.Advance(time.Second) // the token is from a second before the change's
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+id, map[string]any{"password": "another-password-9"})
		if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(tok)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("token after a password change: %d", res.StatusCode)
		}
	})
}

func TestAdminSessionsAndForceLogout(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	owner := s.AdminToken(t)
	_, viewer := newAdmin(t, s, "view@example.com", "viewer")
	body := must(t, s, "GET", "/api/v1/admin/security/sessions", bearer(owner))
	if !strings.Contains(string(body), `"email":"view@example.com"`) || !strings.Contains(string(body), `"user_agent":"Go-http-client`) {
		t.Fatalf("sessions: %s", body)
	}
	var jti string
	for _, it := range apitest.List(t, apitest.DecodeMap(t, body)["data"]) {
		if m := apitest.Obj(t, it); m["email"] == "view@example.com" {
			jti = m["jti"].(string)
		}
	}
	if res, b := s.Do(t, "DELETE", "/api/v1/admin/security/sessions/"+jti, nil, bearer(owner)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke session: %d %s", res.StatusCode, b)
	}
	if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(viewer)); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked session still works: %d", res.StatusCode)
	}
	if strings.Contains(string(must(t, s, "GET", "/api/v1/admin/security/sessions", bearer(owner))), jti) {
		t.Fatal("a revoked session is still listed")
	}
	if res, _ := s.Do(t, "DELETE", "/api/v1/admin/security/sessions/nope", nil, bearer(owner)); res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: %d", res.StatusCode)
	}

	clock.Advance(time.Second) // the owner's token is from a second before the logout's
	if res, b := s.Do(t, "POST", "/api/v1/admin/security/force-logout-all", nil, bearer(owner)); res.StatusCode != http.StatusOK {
		t.Fatalf("force-logout-all: %d %s", res.StatusCode, b)
	}
	if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(owner)); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("owner token after force-logout-all: %d", res.StatusCode)
	}
	// Signing in again works.
	res, b := s.Do(t, "POST", "/api/v1/admin/auth/login", map[string]any{"email": apitest.AdminEmail, "password": apitest.AdminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login after force-logout-all: %d %s", res.StatusCode, b)
	}
}

func TestAPITokens(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text")}))
	id := s.CreateRecord(t, "posts", map[string]any{"title": "x"})["id"].(string)

	mint := func(scopes ...string) (string, string) {
		t.Helper()
		res, body := s.AdminDo(t, "POST", "/api/v1/admin/api-tokens", map[string]any{"name": "ci", "scopes": scopes})
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("mint %v: %d %s", scopes, res.StatusCode, body)
		}
		d := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
		tok := d["token"].(string)
		if !strings.HasPrefix(tok, "svcat_") || apitest.Int(t, d["expires_at"]) < time.Now().Add(89*24*time.Hour).Unix() {
			t.Fatalf("minted %v", d)
		}
		return d["id"].(string), tok
	}
	_, readPosts := mint("collection:posts:read")
	_, anyWrite := mint("collection:*:write")
	adminID, admin := mint("admin")

	cases := []struct {
		tok, method, path string
		body              any
		want              int
	}{
		{readPosts, "GET", "/api/v1/posts/" + id, nil, http.StatusOK},
		{readPosts, "GET", "/api/v1/posts", nil, http.StatusOK},
		{readPosts, "PATCH", "/api/v1/posts/" + id, map[string]any{"title": "y"}, http.StatusForbidden},
		{readPosts, "GET", "/api/v1/notes", nil, http.StatusForbidden},
		{readPosts, "GET", "/api/collections/notes/records", nil, http.StatusForbidden},
		{readPosts, "GET", "/api/v1/admin/collections", nil, http.StatusForbidden},
		{anyWrite, "POST", "/api/v1/notes", map[string]any{"title": "n"}, http.StatusCreated},
		{anyWrite, "GET", "/api/v1/notes", nil, http.StatusForbidden},
		{admin, "GET", "/api/v1/admin/collections", nil, http.StatusOK},
		{admin, "PATCH", "/api/v1/posts/" + id, map[string]any{"title": "z"}, http.StatusOK},
		{"svcat_nottoken", "GET", "/api/v1/posts", nil, http.StatusUnauthorized},
	}
	for _, c := range cases {
		res, body := s.Do(t, c.method, c.path, c.body, bearer(c.tok))
		if res.StatusCode != c.want {
			t.Errorf("%.14s %s %s: %d %s, want %d", c.tok, c.method, c.path, res.StatusCode, body, c.want)
		}
		if c.want == http.StatusForbidden && !strings.Contains(string(body), "Insufficient token scope") {
			t.Errorf("%s %s: %s", c.method, c.path, body)
		}
	}

	t.Run("an API token cannot mint another", func(t *testing.T) {
		res, body := s.Do(t, "POST", "/api/v1/admin/api-tokens", map[string]any{"name": "x", "scopes": []string{"admin"}}, bearer(admin))
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("mint with a token: %d %s", res.StatusCode, body)
		}
	})
	t.Run("list shows metadata only; delete revokes", func(t *testing.T) {
		body := string(must(t, s, "GET", "/api/v1/admin/api-tokens", s.AdminHeaders(t, nil)))
		if strings.Contains(body, "svcat_") || !strings.Contains(body, `"scopes":["admin"]`) {
			t.Fatalf("list: %s", body)
		}
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/api-tokens/"+adminID, nil)
		if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(admin)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("deleted token: %d", res.StatusCode)
		}
	})
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "unknown scope is 422", Method: "POST", URL: "/api/v1/admin/api-tokens", Admin: true,
			Body: map[string]any{"name": "x", "scopes": []string{"root"}}, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("scopes")},
		{Name: "no scopes is 422", Method: "POST", URL: "/api/v1/admin/api-tokens", Admin: true,
			Body: map[string]any{"name": "x"}, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("scopes")},
		{Name: "ttl above 10 years is 422", Method: "POST", URL: "/api/v1/admin/api-tokens", Admin: true,
			Body:           map[string]any{"name": "x", "scopes": []string{"read"}, "ttl_seconds": 11 * 365 * 24 * 3600},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("ttl_seconds")},
	})
}

// TestAuditLog: admin writes land in the audit log, failed ones too
// (a refused role, a validation error); reads and sign-ins do not.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	_, viewer := newAdmin(t, s, "aud@example.com", "viewer")
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	s.Do(t, "DELETE", "/api/v1/admin/collections/posts", nil, bearer(viewer))                        // 403
	s.Do(t, "POST", "/api/v1/admin/collections", map[string]any{"name": ""}, s.AdminHeaders(t, nil)) // 422
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"app.url": "https://x.example"})
	s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/collections/posts", nil)
	want := []string{
		"admins.create 201", "collections.create 201", "collections.delete 403 posts aud@example.com",
		"collections.create 422", "settings.update 200", "collections.delete 204 posts",
	}
	var got []string
	// Each entry commits before its action's answer leaves: read once,
	// with no waiting.
	deadline := time.Now()
	for {
		body := must(t, s, "GET", "/api/v1/admin/audit-log?perPage=50", s.AdminHeaders(t, nil))
		items := apitest.List(t, apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["data"])
		got = got[:0]
		for i := len(items) - 1; i >= 0; i-- {
			m := apitest.Obj(t, items[i])
			e := fmt.Sprintf("%s %v", m["action"], m["status"])
			if m["target"] != "" {
				e += " " + m["target"].(string)
			}
			if m["actor_email"] == "aud@example.com" {
				e += " aud@example.com"
			}
			if m["ip"] != "" || m["path"] == "" || strings.Contains(m["path"].(string), "?") {
				t.Errorf("entry %v: ip must be empty without trusted proxies, path without query", m)
			}
			got = append(got, e)
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res, _ := s.Do(t, "GET", "/api/v1/admin/audit-log", nil, bearer(viewer)); res.StatusCode != http.StatusOK {
		t.Fatalf("viewer reads the audit log: %d", res.StatusCode)
	}
}
