package api_test

import (
	"net/http"
	"testing"

	"github.com/descope/virtualwebauthn"

	"svcd/api/apitest"
)

// What the passkey endpoints refuse: the feature switch, a relying party
// that is missing or wrong, callers that may not, malformed and unverified
// answers.

func TestPasskeyRefusals(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.CreateCollection(t, usersCollection())
	register(t, s, "members", "ann@example.com", userPassword)
	ann := bearer(signIn(t, s, "members", "ann@example.com", userPassword)["token"].(string))
	other := bearer(signUp(t, s, "u@example.com"))
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"auth.anonymous.enabled": "1"})
	guest := bearer(data(t, s, 200, "POST", "/api/v1/auth/members/anonymous", nil, nil)["token"].(string))
	annID := data(t, s, 200, "GET", "/api/v1/auth/me", nil, ann)["id"].(string)
	imp := bearer(data(t, s, 200, "POST", "/api/v1/admin/impersonate/members/"+annID, nil, s.AdminHeaders(t, nil))["token"].(string))
	const unprocessable = http.StatusUnprocessableEntity
	opts := pkURL("members", "register/options")
	setting := func(name string, kv map[string]any) apitest.Scenario {
		return apitest.Scenario{Name: name, Method: "PATCH", URL: settingsURL, Admin: true, Body: kv, ExpectedStatus: 200}
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "no relying party: 422", Method: "POST", URL: opts, Headers: ann, ExpectedStatus: unprocessable,
			ExpectedContent: []string{"Passkeys need a relying party: set app.url, or webauthn.rp_id and webauthn.origins"}},
		{Name: "sign-in neither", Method: "POST", URL: pkURL("members", "login/options"), ExpectedStatus: unprocessable,
			ExpectedContent: []string{"need a relying party"}},
		{Name: "but the list works", Method: "GET", URL: pkURL("members", "credentials"), Headers: ann, ExpectedStatus: 200,
			ExpectedContent: []string{`{"data":[]}`}},
		setting("an IP address as the id", map[string]any{"webauthn.rp_id": "127.0.0.1"}),
		{Name: "is not a domain: 422", Method: "POST", URL: opts, Headers: ann, ExpectedStatus: unprocessable,
			ExpectedContent: []string{`Passkeys are misconfigured: the relying party id \"127.0.0.1\" is not a domain`}},
		setting("an origin outside the id", map[string]any{"webauthn.rp_id": "acme.test", "webauthn.origins": "https://app.acme.test, https://evil.test"}),
		{Name: "is refused: 422", Method: "POST", URL: opts, Headers: ann, ExpectedStatus: unprocessable,
			ExpectedContent: []string{`the host of \"https://evil.test\" is not acme.test or below it`}},
		setting("an origin with a path", map[string]any{"webauthn.origins": "https://app.acme.test/login"}),
		{Name: "is no origin: 422", Method: "POST", URL: opts, Headers: ann, ExpectedStatus: unprocessable,
			ExpectedContent: []string{"is not an origin"}},
		setting("a parent domain as the id, the origin below it, a name", map[string]any{"webauthn.origins": "https://app.acme.test", "webauthn.rp_name": "Acme"}),
		{Name: "options name them", Method: "POST", URL: opts, Headers: ann, ExpectedStatus: 200,
			ExpectedContent: []string{`"rp":{"name":"Acme","id":"acme.test"}`, `"ticket":"`}},

		setting("the switch off", map[string]any{"auth.webauthn.enabled": "0"}),
		{Name: "register options: 422", Method: "POST", URL: opts, Headers: ann, ExpectedStatus: unprocessable,
			ExpectedContent: []string{`"error":"Passkey sign-in is disabled"`}},
		{Name: "register verify: 422", Method: "POST", URL: pkURL("members", "register/verify"), Headers: ann, Body: map[string]any{}, ExpectedStatus: unprocessable},
		{Name: "login options: 422", Method: "POST", URL: pkURL("members", "login/options"), ExpectedStatus: unprocessable},
		{Name: "login verify: 422", Method: "POST", URL: pkURL("members", "login/verify"), Body: map[string]any{}, ExpectedStatus: unprocessable},
		{Name: "list: 422", Method: "GET", URL: pkURL("members", "credentials"), Headers: ann, ExpectedStatus: unprocessable},
		{Name: "rename: 422", Method: "PATCH", URL: pkURL("members", "credentials/x"), Headers: ann, Body: map[string]any{"name": "x"}, ExpectedStatus: unprocessable},
		{Name: "delete: 422", Method: "DELETE", URL: pkURL("members", "credentials/x"), Headers: ann, ExpectedStatus: unprocessable},
		setting("the switch on", map[string]any{"auth.webauthn.enabled": "1"}),

		{Name: "an unknown collection: 404", Method: "POST", URL: pkURL("nosuch", "login/options"), ExpectedStatus: http.StatusNotFound},
		{Name: "an unknown collection, list: 404", Method: "GET", URL: pkURL("posts", "credentials"), Headers: ann, ExpectedStatus: http.StatusNotFound},
		{Name: "no token: 401", Method: "POST", URL: opts, ExpectedStatus: http.StatusUnauthorized},
		{Name: "no token, list: 401", Method: "GET", URL: pkURL("members", "credentials"), ExpectedStatus: http.StatusUnauthorized},
		{Name: "an admin token: 403", Method: "POST", URL: opts, Admin: true, ExpectedStatus: http.StatusForbidden},
		{Name: "an admin lists nobody's: 403", Method: "GET", URL: pkURL("members", "credentials"), Admin: true, ExpectedStatus: http.StatusForbidden},
		{Name: "a user of another collection: 403", Method: "POST", URL: opts, Headers: other, ExpectedStatus: http.StatusForbidden},
		{Name: "a guest: 422", Method: "POST", URL: opts, Headers: guest, ExpectedStatus: unprocessable, ExpectedContent: []string{"promote the account first"}},
		{Name: "an impersonation: 403", Method: "POST", URL: opts, Headers: imp, ExpectedStatus: http.StatusForbidden,
			ExpectedContent: []string{"An impersonation session cannot add a passkey"}},
		{Name: "an impersonation may list", Method: "GET", URL: pkURL("members", "credentials"), Headers: imp, ExpectedStatus: 200},

		{Name: "verify without a ticket or answer: 422", Method: "POST", URL: pkURL("members", "login/verify"), Body: map[string]any{},
			ExpectedStatus: unprocessable, AfterFunc: apitest.Details("ticket", "response")},
		{Name: "an unknown ticket: 401", Method: "POST", URL: pkURL("members", "login/verify"),
			Body: map[string]any{"ticket": "nope", "response": map[string]any{"id": "x"}}, ExpectedStatus: http.StatusUnauthorized,
			ExpectedContent: []string{"Invalid or expired passkey ticket"}},
		{Name: "register: an unknown ticket: 400", Method: "POST", URL: pkURL("members", "register/verify"), Headers: ann,
			Body: map[string]any{"ticket": "nope", "response": map[string]any{"id": "x"}}, ExpectedStatus: http.StatusBadRequest},
		{Name: "a malformed email: 422", Method: "POST", URL: pkURL("members", "login/options"), Body: map[string]any{"email": "not an email"},
			ExpectedStatus: unprocessable, AfterFunc: apitest.Details("email")},
		{Name: "a body that is not JSON: 400", Method: "POST", URL: pkURL("members", "login/options"), Body: "{", ExpectedStatus: http.StatusBadRequest},
	})

	// The relying party of the rest: acme.test, pages on app.acme.test.
	rp := virtualwebauthn.RelyingParty{ID: "acme.test", Name: "Acme", Origin: "https://app.acme.test"}
	t.Run("answers that are not answers: 422", func(t *testing.T) {
		_, ticket := pkOptions(t, s, pkURL("members", "login/options"), nil, nil)
		for _, bad := range []any{"garbage", map[string]any{"id": "x", "type": "public-key"}, []int{1}} {
			e := data(t, s, unprocessable, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": bad}, nil)
			if d := apitest.Obj(t, e["details"]); d["response"] == nil {
				t.Errorf("%v: %v", bad, e)
			}
		}
		_, ticket = pkOptions(t, s, opts, nil, ann)
		data(t, s, unprocessable, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": "garbage"}, ann)
	})
	t.Run("a registration from another origin does not verify: 422", func(t *testing.T) {
		evil := newPasskeyDevice(virtualwebauthn.RelyingParty{ID: "acme.test", Origin: "https://evil.test"})
		o, ticket := pkOptions(t, s, opts, nil, ann)
		e := data(t, s, unprocessable, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": evil.attest(t, o)}, ann)
		if msg, _ := apitest.Obj(t, e["details"])["response"].(string); msg == "" {
			t.Fatalf("no reason: %v", e)
		}
		// For another relying party id neither.
		other := newPasskeyDevice(virtualwebauthn.RelyingParty{ID: "evil.test", Origin: "https://app.acme.test"})
		o, ticket = pkOptions(t, s, opts, nil, ann)
		data(t, s, unprocessable, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": other.attest(t, o)}, ann)
		// Without user verification neither (a passkey must verify its user).
		lax := newPasskeyDevice(rp)
		lax.auth.Options.UserNotVerified = true
		o, ticket = pkOptions(t, s, opts, nil, ann)
		data(t, s, unprocessable, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": lax.attest(t, o)}, ann)
		if l := pkList(t, s, "members", ann); len(l) != 0 {
			t.Fatalf("refused registrations stored something: %v", l)
		}
	})
	t.Run("a ticket is the caller's own and of its kind", func(t *testing.T) {
		dev := newPasskeyDevice(rp)
		o, ticket := pkOptions(t, s, opts, nil, ann)
		answer := dev.attest(t, o)
		// Another user of the collection cannot finish ann's ceremony.
		register(t, s, "members", "bob@example.com", userPassword)
		bobTok := bearer(signIn(t, s, "members", "bob@example.com", userPassword)["token"].(string))
		data(t, s, 400, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": answer}, bobTok)
		// A registration ticket is no sign-in ticket.
		data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": answer}, nil)
		// It still works for ann.
		data(t, s, 200, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": answer}, ann)
		// A sign-in without user verification is refused.
		dev.auth.Options.UserNotVerified = true
		o, ticket = pkOptions(t, s, pkURL("members", "login/options"), map[string]any{"email": "ann@example.com"}, nil)
		e := data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, o)}, nil)
		if e["error"] != "Invalid credentials" {
			t.Fatalf("unverified sign-in: %v", e)
		}
	})
}
