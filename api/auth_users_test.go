package api_test

import (
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

const userPassword = "user-password-123"

// usersCollection is an auth collection anyone may sign up to; each user
// may read and update only their own record.
func usersCollection() map[string]any {
	return coll("users", "auth", []map[string]any{f("name", "text")},
		"create_rule", "", "view_rule", "id = @request.auth.id", "update_rule", "id = @request.auth.id")
}

// signUp registers email and signs in; it returns the token.
func signUp(t testing.TB, s *apitest.Server, email string) string {
	t.Helper()
	res, body := s.Do(t, http.MethodPost, "/api/v1/auth/users/register", map[string]any{"email": email, "password": userPassword, "name": "N"}, nil)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("register %s: %d %s", email, res.StatusCode, body)
	}
	return login(t, s, email, userPassword)
}

func login(t testing.TB, s *apitest.Server, email, password string) string {
	t.Helper()
	res, body := s.Do(t, http.MethodPost, "/api/v1/auth/users/login", map[string]any{"email": email, "password": password}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login %s: %d %s", email, res.StatusCode, body)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func TestUserAuth(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	var tok string

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "register answers 201 with id and email only", Method: "POST", URL: "/api/v1/auth/users/register",
			Body:           map[string]any{"email": "Ann@Example.com", "password": userPassword, "name": "Ann"},
			ExpectedStatus: http.StatusCreated, ExpectedContent: []string{`"id":`, `"email":"Ann@example.com"`},
			NotExpectedContent: []string{"password", `"name"`},
		},
		{
			Name: "register with a taken email is 422", Method: "POST", URL: "/api/v1/auth/users/register",
			Body:           map[string]any{"email": "ann@example.com", "password": userPassword},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("email"),
		},
		{
			Name: "register with a short password is 422", Method: "POST", URL: "/api/v1/auth/users/register",
			Body:           map[string]any{"email": "bob@example.com", "password": "short"},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("password"),
		},
		{
			Name: "register on a base collection is 404", Method: "POST", URL: "/api/v1/auth/posts/register",
			Body:           map[string]any{"email": "bob@example.com", "password": userPassword},
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "login with a wrong password is 401 Invalid credentials", Method: "POST", URL: "/api/v1/auth/users/login",
			Body:           map[string]any{"email": "ann@example.com", "password": "wrong-password-1"},
			ExpectedStatus: http.StatusUnauthorized, ExpectedContent: []string{`"error":"Invalid credentials"`},
		},
		{
			Name: "login with an unknown email is the same 401", Method: "POST", URL: "/api/v1/auth/users/login",
			Body:           map[string]any{"email": "nobody@example.com", "password": userPassword},
			ExpectedStatus: http.StatusUnauthorized, ExpectedContent: []string{`"error":"Invalid credentials"`},
		},
		{
			Name: "login answers the token and the record, and sets the cookie", Method: "POST", URL: "/api/v1/auth/users/login",
			Body:           map[string]any{"email": "ANN@example.com", "password": userPassword},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"token":"`, `"record":{`, `"email":"Ann@example.com"`, `"name":"Ann"`},
			NotExpectedContent: []string{`"password"`, "password_reset_at"},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				tok = apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
			},
		},
	})

	t.Run("me describes the token", func(t *testing.T) {
		res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(tok))
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"aud":"user"`) || !strings.Contains(string(body), `"email":"Ann@example.com"`) {
			t.Fatalf("me: %d %s", res.StatusCode, body)
		}
		if res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, nil); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("me without a token: %d %s", res.StatusCode, body)
		}
		if res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, map[string]string{"Authorization": "Basic x"}); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("me with a malformed header: %d %s", res.StatusCode, body)
		}
	})

	t.Run("the token works with rules, and through the cookie", func(t *testing.T) {
		me := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(tok)))["data"])
		id := me["id"].(string)
		if res, body := s.Do(t, "GET", "/api/v1/users/"+id, nil, bearer(tok)); res.StatusCode != http.StatusOK {
			t.Fatalf("own record: %d %s", res.StatusCode, body)
		}
		if res, _ := s.Do(t, "GET", "/api/v1/users/"+id, nil, nil); res.StatusCode != http.StatusNotFound {
			t.Fatalf("own record without a token: %d", res.StatusCode)
		}
		if res, body := s.Do(t, "GET", "/api/v1/users/"+id, nil, map[string]string{"Cookie": "svc_user_token=" + tok}); res.StatusCode != http.StatusOK {
			t.Fatalf("own record with the cookie: %d %s", res.StatusCode, body)
		}
		if res, _ := s.Do(t, "GET", "/api/v1/users/"+id, nil, map[string]string{"Cookie": "svc_user_token=garbage"}); res.StatusCode != http.StatusNotFound {
			t.Fatalf("a stale cookie is anonymous: %d", res.StatusCode)
		}
		if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(tok)); res.StatusCode != http.StatusForbidden {
			t.Fatalf("a user token on the control plane: %d", res.StatusCode)
		}
	})

	t.Run("refresh issues a new token and revokes the old one", func(t *testing.T) {
		res, body := s.Do(t, "POST", "/api/v1/auth/refresh", nil, bearer(tok))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("refresh: %d %s", res.StatusCode, body)
		}
		fresh := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
		if fresh == tok || !strings.Contains(string(body), `"record":{`) {
			t.Fatalf("refresh answered %s", body)
		}
		if res, _ := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(tok)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the refreshed token still works: %d", res.StatusCode)
		}
		tok = fresh
	})

	t.Run("logout revokes the token and clears the cookies", func(t *testing.T) {
		res, body := s.Do(t, "POST", "/api/v1/auth/logout", nil, bearer(tok))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("logout: %d %s", res.StatusCode, body)
		}
		cleared := 0
		for _, c := range res.Cookies() {
			if (c.Name == "svc_user_token" || c.Name == "svc_admin_token") && c.MaxAge < 0 {
				cleared++
			}
		}
		if cleared != 2 {
			t.Errorf("logout cleared %d cookies: %v", cleared, res.Header["Set-Cookie"])
		}
		if res, _ := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(tok)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a logged-out token still works: %d", res.StatusCode)
		}
		if res, _ := s.Do(t, "POST", "/api/v1/auth/logout", nil, nil); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("logout without a token: %d", res.StatusCode)
		}
	})

	t.Run("admin tokens refresh and log out too", func(t *testing.T) {
		admin := s.AdminToken(t)
		res, body := s.Do(t, "POST", "/api/v1/auth/refresh", nil, bearer(admin))
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"admin":{`) {
			t.Fatalf("admin refresh: %d %s", res.StatusCode, body)
		}
		fresh := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
		if res, _ := s.Do(t, "GET", "/api/v1/admin/collections", nil, bearer(admin)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the refreshed admin token still works: %d", res.StatusCode)
		}
		if res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(fresh)); res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"aud":"admin"`) {
			t.Fatalf("admin me: %d %s", res.StatusCode, body)
		}
	})
}

// TestLoginLockout: with auth.lockout.max_attempts set, the failures of one
// email from one address lock it (429 with Retry-After), even for the
// right password; the counter is replicated state.
func TestLoginLockout(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	signUp(t, s, "lock@example.com")
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"auth.lockout.max_attempts": "3", "auth.lockout.duration_seconds": "60"})
	for i := 0; i < 3; i++ {
		if res, body := s.Do(t, "POST", "/api/v1/auth/users/login", map[string]any{"email": "lock@example.com", "password": "wrong-password-x"}, nil); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s", i+1, res.StatusCode, body)
		}
	}
	res, body := s.Do(t, "POST", "/api/v1/auth/users/login", map[string]any{"email": "LOCK@example.com", "password": userPassword}, nil)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("after 3 failures: %d %s (Retry-After %q)", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
	// Another account from the same address is not locked.
	signUp(t, s, "free@example.com")
}

func must(t testing.TB, s *apitest.Server, method, path string, headers map[string]string) []byte {
	t.Helper()
	res, body := s.Do(t, method, path, nil, headers)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, body)
	}
	return body
}

// TestPasswordAuthSwitch: with auth_options.password off, password
// sign-up and sign-in answer 422 (a disabled feature), not 401.
func TestPasswordAuthSwitch(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	def := usersCollection()
	s.CreateCollection(t, def)
	signUp(t, s, "p@example.com")
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/collections/users", map[string]any{"auth_options": map[string]any{"password": false}})
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "sign-up is off", Method: "POST", URL: "/api/v1/auth/users/register",
			Body:           map[string]any{"email": "q@example.com", "password": userPassword},
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"disabled"}},
		{Name: "sign-in is off", Method: "POST", URL: "/api/v1/auth/users/login",
			Body:           map[string]any{"email": "p@example.com", "password": userPassword},
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"disabled"}},
	})
}
