package api_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"svcd/api/apitest"
)

// The OAuth2 flows against a real local OpenID provider (mockoidc): the
// node signs ID tokens' issuer, audience, signature and nonce against
// it, and it refuses a code used twice and a wrong PKCE verifier itself.

func TestOAuth2Providers(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.CreateCollection(t, coll("nooauth", "auth", nil, "auth_options", map[string]any{"oauth2": false}))
	const list = "/api/v1/auth/members/oauth2/providers"
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "none enabled: an empty list", Method: "GET", URL: list, ExpectedStatus: 200, ExpectedContent: []string{`{"data":[]}`}},
		{Name: "enabled but without client_id: not offered", Method: "GET", URL: list,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"oauth2.github.enabled": "1", "oauth2.twitter.enabled": "1"})
			},
			ExpectedStatus: 200, ExpectedContent: []string{`{"data":[]}`}},
		{Name: "configured: listed in the catalogue's order, twitter with pkce", Method: "GET", URL: list,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"oauth2.github.client_id": "gh", "oauth2.twitter.client_id": "tw",
					"oauth2.github.display_name": "GitHub (work)"})
			},
			ExpectedStatus: 200, ExpectedContent: []string{
				`{"data":[{"name":"github","display_name":"GitHub (work)","pkce":false},{"name":"twitter","display_name":"X (Twitter)","pkce":true}]}`}},
		{Name: "apple needs its team, key and private key", Method: "GET", URL: list,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"oauth2.apple.enabled": "1", "oauth2.apple.client_id": "svc.example"})
			},
			ExpectedStatus: 200, NotExpectedContent: []string{`"apple"`}},
		{Name: "the secrets are masked in the settings", Method: "GET", URL: settingsURL, Admin: true,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"oauth2.github.client_secret": "gh-secret", "oauth2.apple.private_key": "pem"})
			},
			ExpectedStatus: 200, ExpectedContent: []string{`"oauth2.github.client_secret":"********"`, `"oauth2.apple.private_key":"********"`,
				`"oauth2.github.auth_url":"https://github.com/login/oauth/authorize"`, `"auth.oauth2.enabled":"1"`},
			NotExpectedContent: []string{"gh-secret"}},
		{Name: "the collection's auth_options.oauth2 off: 422", Method: "GET", URL: "/api/v1/auth/nooauth/oauth2/providers",
			ExpectedStatus: 422, ExpectedContent: []string{"OAuth2 sign-in is disabled"}},
		{Name: "not an auth collection: 404", Method: "GET", URL: "/api/v1/auth/nope/oauth2/providers", ExpectedStatus: 404},
		{Name: "auth.oauth2.enabled off: 422 everywhere", Method: "GET", URL: list,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"auth.oauth2.enabled": "0"})
			},
			ExpectedStatus: 422, ExpectedContent: []string{"OAuth2 sign-in is disabled"}},
		{Name: "authorize too", Method: "GET", URL: "/api/v1/auth/members/oauth2/authorize?provider=github&redirectUri=https://a.example/cb",
			ExpectedStatus: 422},
		{Name: "exchange too", Method: "POST", URL: "/api/v1/auth/members/oauth2/exchange",
			Body: map[string]any{"provider": "github", "code": "c", "redirectUri": "https://a.example/cb"}, ExpectedStatus: 422},
		{Name: "merge-confirm too", Method: "POST", URL: "/api/v1/auth/members/oauth2/merge-confirm",
			Body: map[string]any{"merge_token": "t", "password": "p"}, ExpectedStatus: 422},
	})
}

func TestOAuth2Authorize(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	m := startMockOIDC(t, s)
	base := "/api/v1/auth/members/oauth2/authorize?provider=oidc&redirectUri=" + url.QueryEscape(oauthRedirect)
	query := func(t testing.TB, body []byte) url.Values {
		u, err := url.Parse(apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["authorize_url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Scheme + "://" + u.Host + u.Path; got != m.AuthorizationEndpoint() {
			t.Errorf("authorize_url goes to %s, want the discovered %s", got, m.AuthorizationEndpoint())
		}
		return u.Query()
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "the client's state, no PKCE, a nonce", Method: "GET", URL: base + "&state=client-state-1", ExpectedStatus: 200,
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*", "Cache-Control": "no-store"},
			ExpectedContent: []string{`"state":"client-state-1"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				q := query(t, body)
				if q.Get("state") != "client-state-1" || q.Get("client_id") != m.ClientID || q.Get("redirect_uri") != oauthRedirect ||
					q.Get("scope") != "openid profile email" || q.Get("response_type") != "code" || q.Get("nonce") == "" {
					t.Errorf("query %v", q)
				}
				if q.Has("code_challenge") {
					t.Errorf("a challenge without PKCE asked: %v", q)
				}
			}},
		{Name: "use_pkce=1: the node's S256 challenge; no state: the node draws one", Method: "GET", URL: base + "&use_pkce=1", ExpectedStatus: 200,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				q := query(t, body)
				if len(q.Get("state")) < 40 || q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 {
					t.Errorf("query %v", q)
				}
			}},
		{Name: "the client's code_challenge is passed on", Method: "GET", URL: base + "&code_challenge=" + strings.Repeat("a", 43), ExpectedStatus: 200,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if q := query(t, body); q.Get("code_challenge") != strings.Repeat("a", 43) {
					t.Errorf("query %v", q)
				}
			}},
		{Name: "a malformed challenge, a plain method: 422", Method: "GET", URL: base + "&code_challenge=short&code_challenge_method=plain",
			ExpectedStatus: 422, AfterFunc: apitest.Details("code_challenge", "code_challenge_method")},
		{Name: "no redirect URI: 422", Method: "GET", URL: "/api/v1/auth/members/oauth2/authorize?provider=oidc",
			ExpectedStatus: 422, AfterFunc: apitest.Details("redirectUri")},
		{Name: "an unknown provider: 422", Method: "GET", URL: "/api/v1/auth/members/oauth2/authorize?provider=myspace&redirectUri=https://a.example/",
			ExpectedStatus: 422, ExpectedContent: []string{`"provider":"is not a known provider"`}},
		{Name: "a known provider that is off: 422", Method: "GET", URL: "/api/v1/auth/members/oauth2/authorize?provider=google&redirectUri=https://a.example/",
			ExpectedStatus: 422, ExpectedContent: []string{`"provider":"is not enabled"`}},
		{Name: "the allowlist: a prefix entry admits", Method: "GET", URL: base, ExpectedStatus: 200,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"oauth2.allowed_redirect_uris": "https://other.example/cb, https://app.example.com/auth/*"})
			}},
		{Name: "the allowlist: anything else is 422", Method: "GET", URL: "/api/v1/auth/members/oauth2/authorize?provider=oidc&redirectUri=https://evil.example/cb",
			ExpectedStatus: 422, ExpectedContent: []string{`"redirectUri":"is not in the allowed redirect URIs"`}},
		{Name: "the provider's own list replaces the global one", Method: "GET", URL: base, ExpectedStatus: 422,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"oauth2.oidc.allowed_redirect_uris": "https://other.example/cb"})
			}},
		{Name: "the issuer out of reach (the egress guard): 503", Method: "GET", URL: "/api/v1/auth/members/oauth2/authorize?provider=oidc&redirectUri=https://other.example/cb",
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"hooks.http.allow": "", "oauth2.oidc.issuer": m.Issuer() + "/elsewhere"})
			},
			ExpectedStatus: 503, ExpectedContent: []string{"could not be reached"}},
	})
}

func TestOAuth2ExchangeOIDC(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	m := startMockOIDC(t, s)
	ann := &mockoidc.MockUser{Subject: "ann-sub", Email: "ann@example.com", EmailVerified: true, PreferredUsername: "ann"}

	var annID string
	t.Run("with PKCE: a new, pre-verified account", func(t *testing.T) {
		d := oidcSignIn(t, s, m, "members", ann, "use_pkce=1", nil).ok()
		rec := apitest.Obj(t, d["record"])
		meta := apitest.Obj(t, d["meta"])
		if rec["email"] != "ann@example.com" || rec["email_verified"] != true || meta["is_new"] != true || meta["id"] != "ann-sub" ||
			meta["provider"] != "oidc" || meta["verified"] != true || meta["username"] != "ann" || d["token"] == nil {
			t.Fatalf("answer %v", d)
		}
		annID = rec["id"].(string)
		me := data(t, s, 200, "GET", "/api/v1/auth/me", nil, bearer(d["token"].(string)))
		if me["id"] != annID {
			t.Errorf("me %v", me)
		}
	})
	t.Run("again, without PKCE: the linked account", func(t *testing.T) {
		d := oidcSignIn(t, s, m, "members", ann, "", nil).ok()
		if apitest.Obj(t, d["record"])["id"] != annID || apitest.Obj(t, d["meta"])["is_new"] != false {
			t.Fatalf("answer %v", d)
		}
	})
	t.Run("the session cookie is set", func(t *testing.T) {
		m.QueueUser(ann)
		u, state := oauthAuthorize(t, s, "members", "oidc", "")
		code, _ := oauthVisit(t, u)
		res, out := s.Do(t, "POST", "/api/v1/auth/members/oauth2/exchange",
			map[string]any{"provider": "oidc", "code": code, "state": state, "redirectUri": oauthRedirect}, nil)
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Set-Cookie"), "svc_user_token=") {
			t.Fatalf("%d %v %s", res.StatusCode, res.Header, out)
		}
	})
	t.Run("the client's own PKCE: its verifier is checked", func(t *testing.T) {
		verifier := strings.Repeat("v", 50)
		sum := sha256.Sum256([]byte(verifier))
		challenge := base64.RawURLEncoding.EncodeToString(sum[:])
		for _, tc := range []struct {
			name, verifier string
			want           int
		}{{"wrong verifier", strings.Repeat("w", 50), 400}, {"no verifier", "", 400}, {"right verifier", verifier, 200}} {
			m.QueueUser(ann)
			u, state := oauthAuthorize(t, s, "members", "oidc", "code_challenge="+challenge)
			code, _ := oauthVisit(t, u)
			body := map[string]any{"provider": "oidc", "code": code, "state": state}
			if tc.verifier != "" {
				body["code_verifier"] = tc.verifier
			}
			if st, out := oauthExchange(t, s, "members", body, nil).pair(); st != tc.want {
				t.Errorf("%s: %d %v", tc.name, st, out)
			}
		}
	})
	t.Run("wrong state", func(t *testing.T) {
		m.QueueUser(ann)
		u, _ := oauthAuthorize(t, s, "members", "oidc", "")
		code, _ := oauthVisit(t, u)
		st, out := oauthExchange(t, s, "members", map[string]any{"provider": "oidc", "code": code, "state": "not-a-state-we-began"}, nil).pair()
		if st != 400 || out["error"] != "Invalid or expired OAuth2 state" {
			t.Fatalf("%d %v", st, out)
		}
	})
	t.Run("a state is spent by its first exchange", func(t *testing.T) {
		m.QueueUser(ann)
		u, state := oauthAuthorize(t, s, "members", "oidc", "")
		code, _ := oauthVisit(t, u)
		oauthExchange(t, s, "members", map[string]any{"provider": "oidc", "code": code, "state": state}, nil).ok()
		st, out := oauthExchange(t, s, "members", map[string]any{"provider": "oidc", "code": code, "state": state}, nil).pair()
		if st != 400 || out["error"] != "Invalid or expired OAuth2 state" {
			t.Fatalf("%d %v", st, out)
		}
	})
	t.Run("a replayed code: the provider refuses it", func(t *testing.T) {
		m.QueueUser(ann)
		u, state := oauthAuthorize(t, s, "members", "oidc", "")
		code, _ := oauthVisit(t, u)
		oauthExchange(t, s, "members", map[string]any{"provider": "oidc", "code": code, "state": state}, nil).ok()
		st, out := oauthExchange(t, s, "members", map[string]any{"provider": "oidc", "code": code}, nil).pair()
		if st != 400 || out["error"] != "The OAuth2 provider refused the code" ||
			apitest.Obj(t, out["details"])["provider_error"] != "invalid_grant" {
			t.Fatalf("%d %v", st, out)
		}
	})
	t.Run("a state for another redirect URI or provider", func(t *testing.T) {
		m.QueueUser(ann)
		u, state := oauthAuthorize(t, s, "members", "oidc", "")
		code, _ := oauthVisit(t, u)
		st, out := oauthExchange(t, s, "members", map[string]any{"provider": "oidc", "code": code, "state": state,
			"redirectUri": "https://app.example.com/other"}, nil).pair()
		if st != 400 || out["error"] != "Invalid or expired OAuth2 state" {
			t.Fatalf("%d %v", st, out)
		}
	})
	t.Run("a code begun under one state and sent with another: the nonce differs", func(t *testing.T) {
		m.QueueUser(ann)
		u, _ := oauthAuthorize(t, s, "members", "oidc", "")
		_, other := oauthAuthorize(t, s, "members", "oidc", "")
		code, _ := oauthVisit(t, u)
		st, out := oauthExchange(t, s, "members", map[string]any{"provider": "oidc", "code": code, "state": other}, nil).pair()
		if st != 400 || out["error"] != "The OAuth2 provider's answer could not be verified" {
			t.Fatalf("%d %v", st, out)
		}
	})
}

func TestOAuth2UnverifiedEmail(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	m := startMockOIDC(t, s)
	victim := register(t, s, "members", "victim@example.com", userPassword)

	// The PocketBase pre-hijack advisory: an attacker's provider account
	// claims the victim's address without having verified it.
	t.Run("an unverified email of an existing account is 409, and nothing is linked", func(t *testing.T) {
		st, out := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "attacker", Email: "victim@example.com"}, "", nil).pair()
		if st != 409 || !strings.Contains(out["error"].(string), "sign in to that account and link oidc") ||
			apitest.Obj(t, out["details"])["email"] != "victim@example.com" {
			t.Fatalf("%d %v", st, out)
		}
		if _, ok := out["data"]; ok {
			t.Fatalf("a 409 with data: %v", out)
		}
		// Still not linked: the same identity is refused again.
		st, _ = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "attacker", Email: "victim@example.com"}, "", nil).pair()
		if st != 409 {
			t.Fatalf("second try: %d", st)
		}
	})
	t.Run("the owner signs in and links the identity from the account", func(t *testing.T) {
		tok := signIn(t, s, "members", "victim@example.com", userPassword)["token"].(string)
		d := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "victim-sub", Email: "victim@example.com"}, "", bearer(tok)).ok()
		if apitest.Obj(t, d["record"])["id"] != victim {
			t.Fatalf("linked to %v", d["record"])
		}
		d = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "victim-sub", Email: "victim@example.com"}, "", nil).ok()
		if apitest.Obj(t, d["record"])["id"] != victim {
			t.Fatalf("signed in to %v", d["record"])
		}
	})
	t.Run("an unverified email nobody has: a new account, without that email", func(t *testing.T) {
		d := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "newbie", Email: "newbie@example.com"}, "", nil).ok()
		rec := apitest.Obj(t, d["record"])
		if !strings.HasSuffix(rec["email"].(string), "@oauth2.invalid") || rec["email_verified"] != false ||
			apitest.Obj(t, d["meta"])["email"] != "newbie@example.com" || apitest.Obj(t, d["meta"])["verified"] != false {
			t.Fatalf("answer %v", d)
		}
		// The address stays free for whoever proves it.
		register(t, s, "members", "newbie@example.com", userPassword)
	})
}

func TestOAuth2Merge(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	m := startMockOIDC(t, s)
	bob := register(t, s, "members", "bob@example.com", userPassword)
	bobOIDC := &mockoidc.MockUser{Subject: "bob-sub", Email: "bob@example.com", EmailVerified: true}
	const confirm = "/api/v1/auth/members/oauth2/merge-confirm"

	mergeToken := func(t *testing.T) string {
		t.Helper()
		d := oidcSignIn(t, s, m, "members", bobOIDC, "use_pkce=1", nil).ok()
		if d["merge_required"] != true || d["email"] != "bob@example.com" || d["provider"] != "oidc" || apitest.Int(t, d["expires_in"]) != 600 ||
			d["token"] != nil || d["record"] != nil {
			t.Fatalf("answer %v", d)
		}
		return d["merge_token"].(string)
	}
	t.Run("by password", func(t *testing.T) {
		tok := mergeToken(t)
		apitest.Run(t, s, []apitest.Scenario{
			{Name: "no proof: 422", Method: "POST", URL: confirm, Body: map[string]any{"merge_token": tok},
				ExpectedStatus: 422, AfterFunc: apitest.Details("password")},
			{Name: "a wrong password: 401", Method: "POST", URL: confirm, Body: map[string]any{"merge_token": tok, "password": "wrong-password-1"},
				ExpectedStatus: 401, ExpectedContent: []string{"Invalid credentials"}},
			{Name: "a forged token: 400", Method: "POST", URL: confirm, Body: map[string]any{"merge_token": "forged", "password": userPassword},
				ExpectedStatus: 400, ExpectedContent: []string{"Invalid or expired merge token"}},
			{Name: "the account's password: a session of the account", Method: "POST", URL: confirm,
				Body: map[string]any{"merge_token": tok, "password": userPassword}, ExpectedStatus: 200,
				ExpectedContent: []string{`"token":"`, `"id":"` + bob + `"`, `"meta":{"provider":"oidc","id":"bob-sub"`}},
			{Name: "spent", Method: "POST", URL: confirm, Body: map[string]any{"merge_token": tok, "password": userPassword},
				ExpectedStatus: 400, ExpectedContent: []string{"Invalid or expired merge token"}},
		})
		d := oidcSignIn(t, s, m, "members", bobOIDC, "", nil).ok()
		if apitest.Obj(t, d["record"])["id"] != bob {
			t.Fatalf("after the merge the identity signs in to %v", d["record"])
		}
	})
	t.Run("unlink, then by session", func(t *testing.T) {
		sess := signIn(t, s, "members", "bob@example.com", userPassword)["token"].(string)
		res, out := s.Do(t, "DELETE", "/api/v1/auth/members/oauth2/oidc/unlink", nil, bearer(sess))
		if res.StatusCode != 204 {
			t.Fatalf("unlink: %d %s", res.StatusCode, out)
		}
		tok := mergeToken(t)
		other := register(t, s, "members", "carol@example.com", userPassword)
		carol := signIn(t, s, "members", "carol@example.com", userPassword)["token"].(string)
		apitest.Run(t, s, []apitest.Scenario{
			{Name: "another account's session: 403", Method: "POST", URL: confirm, Body: map[string]any{"merge_token": tok},
				Headers: bearer(carol), ExpectedStatus: 403, NotExpectedContent: []string{bob, other}},
			{Name: "the account's own session", Method: "POST", URL: confirm, Body: map[string]any{"merge_token": tok},
				Headers: bearer(sess), ExpectedStatus: 200, ExpectedContent: []string{`"id":"` + bob + `"`}},
		})
	})
	t.Run("five wrong passwords burn the token", func(t *testing.T) {
		sess := signIn(t, s, "members", "bob@example.com", userPassword)["token"].(string)
		if res, out := s.Do(t, "DELETE", "/api/v1/auth/members/oauth2/oidc/unlink", nil, bearer(sess)); res.StatusCode != 204 {
			t.Fatalf("unlink: %d %s", res.StatusCode, out)
		}
		tok := mergeToken(t)
		for i := 0; i < 5; i++ {
			data(t, s, 401, "POST", confirm, map[string]any{"merge_token": tok, "password": "wrong-password-1"}, nil)
		}
		data(t, s, 400, "POST", confirm, map[string]any{"merge_token": tok, "password": userPassword}, nil)
	})
}

func TestOAuth2Unlink(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	m := startMockOIDC(t, s)
	d := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "dee", Email: "dee@example.com", EmailVerified: true}, "", nil).ok()
	dee, id := d["token"].(string), apitest.Obj(t, d["record"])["id"].(string)
	const unlink = "/api/v1/auth/members/oauth2/oidc/unlink"
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "anonymous: 401", Method: "DELETE", URL: unlink, ExpectedStatus: 401},
		{Name: "an admin: 403", Method: "DELETE", URL: unlink, Admin: true, ExpectedStatus: 403},
		{Name: "the only way to sign in: 409", Method: "DELETE", URL: unlink, Headers: bearer(dee), ExpectedStatus: 409,
			ExpectedContent: []string{"no way to sign in"}},
		{Name: "an unknown provider: 404", Method: "DELETE", URL: "/api/v1/auth/members/oauth2/myspace/unlink", Headers: bearer(dee), ExpectedStatus: 404},
		{Name: "a provider not linked: 404", Method: "DELETE", URL: "/api/v1/auth/members/oauth2/github/unlink", Headers: bearer(dee), ExpectedStatus: 404},
		{Name: "with email OTP on, the email is a way", Method: "DELETE", URL: unlink, Headers: bearer(dee), ExpectedStatus: 204,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"auth.otp.enabled": "1"})
			}},
		{Name: "gone", Method: "DELETE", URL: unlink, Headers: bearer(dee), ExpectedStatus: 404},
	})
	// The identity is free again: it is the account's verified email, so
	// signing in asks for a merge.
	d = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "dee", Email: "dee@example.com", EmailVerified: true}, "", nil).ok()
	if d["merge_required"] != true {
		t.Fatalf("answer %v", d)
	}
	// Deleting the account removes its links: the identity makes a new
	// account.
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"auth.otp.enabled": "0"})
	tok := d["merge_token"].(string)
	data(t, s, 200, "POST", "/api/v1/auth/members/oauth2/merge-confirm", map[string]any{"merge_token": tok}, bearer(dee))
	res, out := s.AdminDo(t, "DELETE", "/api/v1/members/"+id, nil)
	if res.StatusCode != 204 {
		t.Fatalf("delete: %d %s", res.StatusCode, out)
	}
	d = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "dee", Email: "dee@example.com", EmailVerified: true}, "", nil).ok()
	if apitest.Obj(t, d["meta"])["is_new"] != true || apitest.Obj(t, d["record"])["id"] == id {
		t.Fatalf("answer %v", d)
	}
}

func TestOAuth2Link(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"auth.anonymous.enabled": "1"})
	m := startMockOIDC(t, s)
	eve := register(t, s, "members", "eve@example.com", userPassword)
	eveTok := signIn(t, s, "members", "eve@example.com", userPassword)["token"].(string)
	register(t, s, "members", "fay@example.com", userPassword)
	fayTok := signIn(t, s, "members", "fay@example.com", userPassword)["token"].(string)

	d := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "eve-gh", Email: "eve.other@example.com", EmailVerified: true}, "", bearer(eveTok)).ok()
	if apitest.Obj(t, d["record"])["id"] != eve {
		t.Fatalf("linked to %v", d["record"])
	}
	st, out := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "eve-gh", Email: "eve.other@example.com", EmailVerified: true}, "", bearer(fayTok)).pair()
	if st != 409 || strings.Contains(strings.ToLower(out["error"].(string)), "eve") {
		t.Fatalf("another account's identity: %d %v", st, out)
	}
	st, _ = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "eve-second", Email: "x@example.com", EmailVerified: true}, "", bearer(eveTok)).pair()
	if st != 409 {
		t.Fatalf("a second identity of the provider: %d", st)
	}
	guest := data(t, s, 200, "POST", "/api/v1/auth/members/anonymous", nil, nil)["token"].(string)
	if st, _ = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "guest-sub"}, "", bearer(guest)).pair(); st != 422 {
		t.Fatalf("a guest links: %d", st)
	}
	imp := data(t, s, 200, "POST", "/api/v1/admin/impersonate/members/"+eve, nil, s.AdminHeaders(t, nil))["token"].(string)
	if st, _ = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "admin-sub"}, "", bearer(imp)).pair(); st != 403 {
		t.Fatalf("an impersonation links: %d", st)
	}
	// An admin's token links nothing: the exchange is a plain sign-in.
	d = oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "zed", Email: "zed@example.com", EmailVerified: true}, "", s.AdminHeaders(t, nil)).ok()
	if apitest.Obj(t, d["meta"])["is_new"] != true {
		t.Fatalf("answer %v", d)
	}
}

// TestOAuth2MFA: an OAuth2 sign-in is a first factor like a password: an
// account with TOTP on gets an MFA ticket (and no cookie), from an
// exchange of its linked identity and from a merge confirmed with its
// password.
func TestOAuth2MFA(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	m := startMockOIDC(t, s)
	register(t, s, "members", "tess@example.com", userPassword)
	tok := signIn(t, s, "members", "tess@example.com", userPassword)["token"].(string)
	secret := data(t, s, 200, "POST", "/api/v1/auth/members/totp/setup", nil, bearer(tok))["secret"].(string)
	codes := data(t, s, 200, "POST", "/api/v1/auth/members/totp/confirm", map[string]any{"code": oathCode(t, secret, time.Now())}, bearer(tok))["recovery_codes"].([]any)

	linked := &mockoidc.MockUser{Subject: "tess-linked", Email: "tess.other@example.com", EmailVerified: true}
	if d := oidcSignIn(t, s, m, "members", linked, "", bearer(tok)).ok(); d["token"] == nil {
		t.Fatalf("linking from a session: %v", d)
	}
	ticket := func(t *testing.T, a oauthAnswer) string {
		t.Helper()
		d := a.ok()
		if d["mfa_required"] != true || d["token"] != nil || d["record"] != nil {
			t.Fatalf("answer %v", d)
		}
		return d["mfa_token"].(string)
	}
	mfa := ticket(t, oidcSignIn(t, s, m, "members", linked, "", nil))
	data(t, s, 200, "POST", "/api/v1/auth/members/login/mfa", map[string]any{"mfa_token": mfa, "recovery_code": codes[0]}, nil)

	// One identity per provider and account: unlink the first.
	if res, out := s.Do(t, "DELETE", "/api/v1/auth/members/oauth2/oidc/unlink", nil, bearer(tok)); res.StatusCode != 204 {
		t.Fatalf("unlink: %d %s", res.StatusCode, out)
	}
	merge := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "tess-merge", Email: "tess@example.com", EmailVerified: true}, "", nil).ok()
	res, out := s.Do(t, "POST", "/api/v1/auth/members/oauth2/merge-confirm", map[string]any{"merge_token": merge["merge_token"], "password": userPassword}, nil)
	if res.StatusCode != 200 || len(res.Cookies()) != 0 || !strings.Contains(string(out), `"mfa_required":true`) {
		t.Fatalf("merge by password: %d %v %s", res.StatusCode, res.Cookies(), out)
	}
}
