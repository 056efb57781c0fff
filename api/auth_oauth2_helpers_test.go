package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"svcd/api/apitest"
)

// oauthRedirect is the client's redirect page in the OAuth2 tests: never
// fetched (the tests read the code from the provider's redirect to it).
const oauthRedirect = "https://app.example.com/auth/callback"

// startMockOIDC starts a real local OpenID provider (mockoidc: discovery,
// RS256 ID tokens with the nonce, PKCE S256, user info, single-use codes)
// and points the node's oidc provider at it. Loopback is allowed through
// the egress guard with hooks.http.allow, as an operator would.
func startMockOIDC(t testing.TB, s *apitest.Server) *mockoidc.MockOIDC {
	t.Helper()
	m := apitest.RunMockOIDC(t)
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{
		"hooks.http.allow":          "127.0.0.1",
		"oauth2.oidc.enabled":       "1",
		"oauth2.oidc.client_id":     m.ClientID,
		"oauth2.oidc.client_secret": m.ClientSecret,
		"oauth2.oidc.issuer":        m.Issuer(),
	})
	return m
}

// oauthVisit plays the browser at the provider: it opens authorizeURL and
// returns the code and state the provider sends back to the redirect URI.
func oauthVisit(t testing.TB, authorizeURL string) (code, state string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(authorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), oauthRedirect) {
		t.Fatalf("the provider answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	return loc.Query().Get("code"), loc.Query().Get("state")
}

// oauthAuthorize asks the node for an authorization URL; query adds to
// provider and redirectUri.
func oauthAuthorize(t testing.TB, s *apitest.Server, coll, provider, query string) (authorizeURL, state string) {
	t.Helper()
	q := "provider=" + provider + "&redirectUri=" + url.QueryEscape(oauthRedirect)
	if query != "" {
		q += "&" + query
	}
	d := data(t, s, http.StatusOK, "GET", "/api/v1/auth/"+coll+"/oauth2/authorize?"+q, nil, nil)
	return d["authorize_url"].(string), d["state"].(string)
}

// oauthAnswer is the answer to an exchange.
type oauthAnswer struct {
	t      testing.TB
	status int
	body   map[string]any
}

// ok is the data member of a 200 answer.
func (a oauthAnswer) ok() map[string]any {
	a.t.Helper()
	if a.status != http.StatusOK {
		a.t.Fatalf("status %d, want 200: %v", a.status, a.body)
	}
	return apitest.Obj(a.t, a.body["data"])
}

// pair is the status and the body.
func (a oauthAnswer) pair() (int, map[string]any) { return a.status, a.body }

// oauthExchange posts an exchange.
func oauthExchange(t testing.TB, s *apitest.Server, coll string, body map[string]any, headers map[string]string) oauthAnswer {
	t.Helper()
	if body["redirectUri"] == nil {
		body["redirectUri"] = oauthRedirect
	}
	res, out := s.Do(t, "POST", "/api/v1/auth/"+coll+"/oauth2/exchange", body, headers)
	apitest.CheckCommon(t, res, out)
	return oauthAnswer{t: t, status: res.StatusCode, body: apitest.DecodeMap(t, out)}
}

// oidcSignIn runs the whole flow for user at the mock provider (query
// adds to the authorize call) and answers the exchange.
func oidcSignIn(t testing.TB, s *apitest.Server, m *mockoidc.MockOIDC, coll string, user *mockoidc.MockUser, query string, headers map[string]string) oauthAnswer {
	t.Helper()
	m.QueueUser(user)
	u, state := oauthAuthorize(t, s, coll, "oidc", query)
	code, back := oauthVisit(t, u)
	if back != state {
		t.Fatalf("the provider sent back state %q, want %q", back, state)
	}
	return oauthExchange(t, s, coll, map[string]any{"provider": "oidc", "code": code, "state": state}, headers)
}
