package api_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/engine/token"
)

const setupURL = "/api/v1/admin/setup"

func TestAdminSetupAndLogin(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	good := map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword}

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "status before setup",
			URL:             "/api/v1/admin/setup/status",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"has_admin":false`, `"needs_setup":true`, `"setup_key_required":false`},
		},
		{
			Name:            "setup with malformed JSON is 400",
			Method:          http.MethodPost,
			URL:             setupURL,
			Body:            `{"email":`,
			ExpectedStatus:  http.StatusBadRequest,
			ExpectedContent: []string{"Invalid JSON body"},
		},
		{
			Name:           "setup with a bad email is 422 on email",
			Method:         http.MethodPost,
			URL:            setupURL,
			Body:           map[string]string{"email": "not-an-email", "password": apitest.AdminPassword},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("email"),
		},
		{
			Name:            "setup with a short password is 422 on password",
			Method:          http.MethodPost,
			URL:             setupURL,
			Body:            map[string]string{"email": apitest.AdminEmail, "password": "short"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"at least 12 characters"},
			AfterFunc:       apitest.Details("password"),
		},
		{
			Name:           "setup with an empty body object is 422 on both",
			Method:         http.MethodPost,
			URL:            setupURL,
			Body:           map[string]string{},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("email", "password"),
		},
		{
			Name:            "no admin was created by the failures",
			URL:             "/api/v1/admin/setup/status",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"has_admin":false`},
		},
	})

	t.Run("setup creates the owner, signs it in and sets the cookie", func(t *testing.T) {
		res, body := s.Do(t, http.MethodPost, setupURL, good, nil)
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("setup: %d %s", res.StatusCode, body)
		}
		if _, err := strconv.ParseUint(res.Header.Get("X-Svc-Index"), 10, 64); err != nil {
			t.Errorf("X-Svc-Index = %q", res.Header.Get("X-Svc-Index"))
		}
		tok, admin := sessionOf(t, body)
		if admin["email"] != apitest.AdminEmail || admin["role"] != "owner" {
			t.Errorf("admin = %v", admin)
		}
		if id, _ := admin["id"].(string); !strings.HasPrefix(id, "adm_") || len(id) != 19 {
			t.Errorf("admin id = %q", admin["id"])
		}
		for _, k := range []string{"created", "updated"} {
			if _, ok := admin[k].(json.Number); !ok {
				t.Errorf("admin.%s = %v", k, admin[k])
			}
		}
		for _, k := range []string{"password", "hash"} {
			if _, ok := admin[k]; ok {
				t.Errorf("admin exposes %q", k)
			}
		}
		checkAdminCookie(t, res, tok)
		checkAdminClaims(t, tok, admin["id"].(string))
	})

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "status after setup",
			URL:             "/api/v1/admin/setup/status",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"has_admin":true`, `"needs_setup":false`},
		},
		{
			Name:               "a second setup is 409",
			Method:             http.MethodPost,
			URL:                setupURL,
			Body:               map[string]string{"email": "other@example.com", "password": apitest.AdminPassword},
			ExpectedStatus:     http.StatusConflict,
			NotExpectedContent: []string{"token"},
		},
		{
			Name:            "login with a wrong password is 401 Invalid credentials",
			Method:          http.MethodPost,
			URL:             "/api/v1/admin/auth/login",
			Body:            map[string]string{"email": apitest.AdminEmail, "password": "wrong-password-123"},
			ExpectedStatus:  http.StatusUnauthorized,
			ExpectedContent: []string{`"error":"Invalid credentials"`},
		},
		{
			Name:            "login with an unknown email is the same 401",
			Method:          http.MethodPost,
			URL:             "/api/v1/admin/auth/login",
			Body:            map[string]string{"email": "nobody@example.com", "password": apitest.AdminPassword},
			ExpectedStatus:  http.StatusUnauthorized,
			ExpectedContent: []string{`"error":"Invalid credentials"`},
		},
		{
			Name:            "login with an empty password is the same 401",
			Method:          http.MethodPost,
			URL:             "/api/v1/admin/auth/login",
			Body:            map[string]string{"email": apitest.AdminEmail},
			ExpectedStatus:  http.StatusUnauthorized,
			ExpectedContent: []string{`"error":"Invalid credentials"`},
		},
		{
			Name:            "login with malformed JSON is 400",
			Method:          http.MethodPost,
			URL:             "/api/v1/admin/auth/login",
			Body:            `not json`,
			ExpectedStatus:  http.StatusBadRequest,
			ExpectedContent: []string{"Invalid JSON body"},
		},
		{
			Name:            "login ignores the case of the email",
			Method:          http.MethodPost,
			URL:             "/api/v1/admin/auth/login",
			Body:            map[string]string{"email": " ADMIN@Example.COM ", "password": apitest.AdminPassword},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"token":"`, `"role":"owner"`},
		},
	})

	var loginTok string
	t.Run("login answers token and admin and sets the cookie", func(t *testing.T) {
		res, body := s.Do(t, http.MethodPost, "/api/v1/admin/auth/login", good, nil)
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("login: %d %s", res.StatusCode, body)
		}
		var admin map[string]any
		loginTok, admin = sessionOf(t, body)
		if admin["role"] != "owner" || admin["email"] != apitest.AdminEmail {
			t.Errorf("admin = %v", admin)
		}
		checkAdminCookie(t, res, loginTok)
		checkAdminClaims(t, loginTok, admin["id"].(string))
	})

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "the login token works as a bearer token",
			URL:            "/api/v1/admin/collections",
			Headers:        map[string]string{"Authorization": "Bearer " + loginTok},
			ExpectedStatus: http.StatusOK,
		},
		{
			Name:           "the bearer scheme is case-insensitive",
			URL:            "/api/v1/admin/collections",
			Headers:        map[string]string{"Authorization": "bearer " + loginTok},
			ExpectedStatus: http.StatusOK,
		},
		{
			Name:           "the token works through the cookie",
			URL:            "/api/v1/admin/collections",
			Headers:        map[string]string{"Cookie": "svc_admin_token=" + loginTok},
			ExpectedStatus: http.StatusOK,
		},
		{
			Name:            "a garbage bearer token is 401",
			URL:             "/api/v1/admin/collections",
			Headers:         map[string]string{"Authorization": "Bearer not.a.jwt"},
			ExpectedStatus:  http.StatusUnauthorized,
			ExpectedContent: []string{"Invalid or expired token"},
		},
		{
			Name:           "a tampered token is 401",
			URL:            "/api/v1/admin/collections",
			Headers:        map[string]string{"Authorization": "Bearer " + tamper(loginTok)},
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name:           "another Authorization scheme is 401",
			URL:            "/api/v1/admin/collections",
			Headers:        map[string]string{"Authorization": "Basic YWRtaW46cGFzcw=="},
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name:           "a bad Authorization header is 401 on a route that reads credentials",
			URL:            "/api/v1/admin/collections",
			Headers:        map[string]string{"Authorization": "Bearer garbage"},
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name:            "setup status ignores a stale Authorization header",
			URL:             "/api/v1/admin/setup/status",
			Headers:         map[string]string{"Authorization": "Bearer garbage"},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"has_admin":true`},
		},
		{
			Name:            "login works with a stale Authorization header",
			Method:          http.MethodPost,
			URL:             "/api/v1/admin/auth/login",
			Headers:         map[string]string{"Authorization": "Bearer garbage"},
			Body:            map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"token"`},
		},
		{
			Name:            "a garbage cookie is ignored: the caller is anonymous",
			URL:             "/api/v1/admin/collections",
			Headers:         map[string]string{"Cookie": "svc_admin_token=garbage"},
			ExpectedStatus:  http.StatusUnauthorized,
			ExpectedContent: []string{"Authentication required"},
		},
		{
			Name:           "a garbage cookie does not break a public route",
			URL:            "/api/v1/admin/setup/status",
			Headers:        map[string]string{"Cookie": "svc_admin_token=garbage"},
			ExpectedStatus: http.StatusOK,
		},
		{
			Name:           "the header wins over the cookie",
			URL:            "/api/v1/admin/collections",
			Headers:        map[string]string{"Authorization": "Bearer garbage", "Cookie": "svc_admin_token=" + loginTok},
			ExpectedStatus: http.StatusUnauthorized,
		},
	})
}

func TestAdminSetupKey(t *testing.T) {
	t.Parallel()
	const key = "s3tup-k3y-for-tests"
	s := apitest.Start(t, apitest.Options{SetupKey: key})
	body := map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword}

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:               "status says a key is required",
			URL:                "/api/v1/admin/setup/status",
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"setup_key_required":true`, `"needs_setup":true`},
			NotExpectedContent: []string{key},
		},
		{
			Name:           "missing X-Setup-Key is 403",
			Method:         http.MethodPost,
			URL:            setupURL,
			Body:           body,
			ExpectedStatus: http.StatusForbidden,
		},
		{
			Name:           "wrong X-Setup-Key is 403",
			Method:         http.MethodPost,
			URL:            setupURL,
			Body:           body,
			Headers:        map[string]string{"X-Setup-Key": key + "x"},
			ExpectedStatus: http.StatusForbidden,
		},
		{
			Name:           "the key is checked before the body",
			Method:         http.MethodPost,
			URL:            setupURL,
			Body:           `{broken`,
			ExpectedStatus: http.StatusForbidden,
		},
		{
			Name:            "the right key creates the owner",
			Method:          http.MethodPost,
			URL:             setupURL,
			Body:            body,
			Headers:         map[string]string{"X-Setup-Key": key},
			ExpectedStatus:  http.StatusCreated,
			ExpectedContent: []string{`"token":"`, `"role":"owner"`},
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
		},
		{
			Name:           "then setup is 409 even with the key",
			Method:         http.MethodPost,
			URL:            setupURL,
			Body:           body,
			Headers:        map[string]string{"X-Setup-Key": key},
			ExpectedStatus: http.StatusConflict,
		},
	})
}

// TestAdminSetupRace: of many concurrent setups exactly one wins; the
// decision is taken at apply time.
func TestAdminSetupRace(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	const n = 12
	answers := race(s, n, http.MethodPost, setupURL, nil, func(i int) any {
		return map[string]string{"email": "admin" + strconv.Itoa(i) + "@example.com", "password": apitest.AdminPassword}
	})
	created := 0
	var codes []int
	for _, a := range answers {
		if a.err != nil {
			t.Fatal(a.err)
		}
		apitest.CheckCommon(t, a.res, a.body)
		codes = append(codes, a.res.StatusCode)
		switch a.res.StatusCode {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Errorf("unexpected status %d: %s", a.res.StatusCode, a.body)
		}
	}
	if created != 1 {
		t.Errorf("%d setups succeeded, want exactly 1 (codes %v)", created, codes)
	}
}

func sessionOf(t testing.TB, body []byte) (string, map[string]any) {
	t.Helper()
	data := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
	tok, _ := data["token"].(string)
	if tok == "" {
		t.Fatalf("no token in %s", body)
	}
	return tok, apitest.Obj(t, data["admin"])
}

func checkAdminCookie(t testing.TB, res *http.Response, tok string) {
	t.Helper()
	var c *http.Cookie
	for _, rc := range res.Cookies() {
		if rc.Name == "svc_admin_token" {
			c = rc
		}
	}
	if c == nil {
		t.Fatalf("no svc_admin_token cookie in %q", res.Header.Values("Set-Cookie"))
	}
	raw := strings.Join(res.Header.Values("Set-Cookie"), "; ")
	if c.Value != tok {
		t.Errorf("cookie value is not the token")
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
		t.Errorf("cookie attributes: %s", raw)
	}
	if c.MaxAge != 7*24*3600 {
		t.Errorf("cookie Max-Age = %d, want the token lifetime 604800: %s", c.MaxAge, raw)
	}
	if c.Secure {
		t.Errorf("cookie is Secure although app.url is not https: %s", raw)
	}
}

// checkAdminClaims decodes the JWT payload (without verifying it).
func checkAdminClaims(t testing.TB, tok, adminID string) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("payload: %v", err)
	}
	var c struct {
		Iss   string   `json:"iss"`
		Aud   []string `json:"aud"`
		ID    string   `json:"id"`
		Email string   `json:"email"`
		Jti   string   `json:"jti"`
		Iat   int64    `json:"iat"`
		Exp   int64    `json:"exp"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("claims %s: %v", raw, err)
	}
	now := time.Now().Unix()
	switch {
	case c.Iss != "svc":
		t.Errorf("iss = %q", c.Iss)
	case len(c.Aud) != 1 || c.Aud[0] != "admin":
		t.Errorf("aud = %v", c.Aud)
	case c.ID != adminID:
		t.Errorf("id = %q, want %q", c.ID, adminID)
	case c.Email != apitest.AdminEmail:
		t.Errorf("email = %q", c.Email)
	case c.Jti == "":
		t.Errorf("no jti")
	case c.Iat < now-60 || c.Iat > now+5:
		t.Errorf("iat = %d, now %d", c.Iat, now)
	case c.Exp-c.Iat != 7*24*3600:
		t.Errorf("exp - iat = %d, want 604800", c.Exp-c.Iat)
	}
}

// tamper flips one character of the signature.
func tamper(tok string) string {
	b := []byte(tok)
	i := len(b) - 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// TestAdminTokenForgeries: unsigned tokens, tokens of another audience and
// tokens of unknown admins are refused, even when signed with the node's
// key.
func TestAdminTokenForgeries(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	tok := s.AdminToken(t)
	parts := strings.Split(tok, ".")
	enc := base64.RawURLEncoding.EncodeToString
	none := enc([]byte(`{"alg":"none","typ":"JWT"}`))

	hexKey, err := os.ReadFile(filepath.Join(s.DataDir, "jwt.key"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(hexKey)))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := token.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	adminID := sessionClaimsID(t, tok)
	sign := func(c token.Claims, aud string, ttl time.Duration) string {
		raw, _, err := signer.Issue(c, aud, time.Now(), ttl)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "alg none", URL: collectionsURL, Headers: map[string]string{"Authorization": "Bearer " + none + "." + parts[1] + "."}, ExpectedStatus: http.StatusUnauthorized},
		{Name: "alg none without a signature part", URL: collectionsURL, Headers: map[string]string{"Authorization": "Bearer " + none + "." + parts[1]}, ExpectedStatus: http.StatusUnauthorized},
		{Name: "an empty bearer", URL: collectionsURL, Headers: map[string]string{"Authorization": "Bearer "}, ExpectedStatus: http.StatusUnauthorized},
		{Name: "a user-audience token signed with the node's key", URL: collectionsURL, Headers: map[string]string{"Authorization": "Bearer " + sign(token.Claims{ID: adminID}, token.AudUser, time.Hour)}, ExpectedStatus: http.StatusUnauthorized},
		{Name: "an admin token for an unknown admin", URL: collectionsURL, Headers: map[string]string{"Authorization": "Bearer " + sign(token.Claims{ID: "adm_nobody"}, token.AudAdmin, time.Hour)}, ExpectedStatus: http.StatusUnauthorized},
		{Name: "an admin token already expired", URL: collectionsURL, Headers: map[string]string{"Authorization": "Bearer " + sign(token.Claims{ID: adminID}, token.AudAdmin, -time.Minute)}, ExpectedStatus: http.StatusUnauthorized},
		{Name: "a well-formed admin token works (control)", URL: collectionsURL, Headers: map[string]string{"Authorization": "Bearer " + sign(token.Claims{ID: adminID}, token.AudAdmin, time.Hour)}, ExpectedStatus: http.StatusOK},
	})
}

// TestOwnerFromShell: an owner created by `svcd admin create` (the engine's
// CreateOwner) closes setup and can sign in.
func TestOwnerFromShell(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	if _, _, err := s.Stack.Auth.Admins().CreateOwner(ctx, "ops@example.com", "shell-password-1"); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Stack.Auth.Admins().CreateOwner(ctx, "OPS@example.com", "shell-password-2")
	if err == nil || !strings.Contains(err.Error(), "email") {
		t.Errorf("a second owner with the same email: %v", err)
	}
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "setup status sees the admin",
			URL:             "/api/v1/admin/setup/status",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"has_admin":true`},
		},
		{
			Name:           "setup is closed",
			Method:         http.MethodPost,
			URL:            setupURL,
			Body:           map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword},
			ExpectedStatus: http.StatusConflict,
		},
		{
			Name:            "the owner signs in",
			Method:          http.MethodPost,
			URL:             "/api/v1/admin/auth/login",
			Body:            map[string]string{"email": "ops@example.com", "password": "shell-password-1"},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"role":"owner"`, `"email":"ops@example.com"`},
		},
	})
}

// sessionClaimsID returns the id claim of a token (unverified).
func sessionClaimsID(t testing.TB, tok string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" {
		t.Fatalf("claims %s: %v", raw, err)
	}
	return c.ID
}
