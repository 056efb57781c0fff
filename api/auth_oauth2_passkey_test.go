package api_test

import (
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"svcd/api/apitest"
)

// TestOAuth2UnlinkKeepsPasskeys: an account made by OAuth2 (no password,
// no email OTP) that has a passkey keeps a way to sign in, so its last
// link may go; with passkey sign-in off, the passkey does not count.
func TestOAuth2UnlinkKeepsPasskeys(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.MustAdmin(t, 200, "PATCH", settingsURL, acmeSettings())
	m := startMockOIDC(t, s)
	d := oidcSignIn(t, s, m, "members", &mockoidc.MockUser{Subject: "gil", Email: "gil@example.com", EmailVerified: true}, "", nil).ok()
	gil := d["token"].(string)
	newPasskeyDevice(acmeRP()).enroll(t, s, s, "members", gil, "laptop")
	const unlink = "/api/v1/auth/members/oauth2/oidc/unlink"
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "passkey sign-in off: the link is the only way in", Method: "DELETE", URL: unlink, Headers: bearer(gil), ExpectedStatus: 409,
			ExpectedContent: []string{"no way to sign in"},
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"auth.webauthn.enabled": "0"})
			}},
		{Name: "passkey sign-in on: the passkey is a way in", Method: "DELETE", URL: unlink, Headers: bearer(gil), ExpectedStatus: 204,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"auth.webauthn.enabled": "1"})
			}},
	})
}
