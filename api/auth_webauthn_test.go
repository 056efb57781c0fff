package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Passkeys on one node, with a virtual authenticator (virtualwebauthn):
// the relying party and the feature switch, registration, sign-in by
// email and discoverable, the tickets' single use and expiry, the sign
// counter, who may do what, and the credentials' list, rename and delete.
// The cluster test (auth_webauthn_cluster_test.go) runs the ceremonies
// across nodes, the browser test (auth_webauthn_browser_test.go) in
// Chromium.

// pkNode starts a node with the users and members collections, the
// relying party https://app.acme.test, and ann signed up to members.
func pkNode(t *testing.T, opts apitest.Options) (*apitest.Server, string, string) {
	t.Helper()
	s := apitest.Start(t, opts)
	s.CreateCollection(t, members())
	s.CreateCollection(t, usersCollection())
	s.MustAdmin(t, 200, "PATCH", settingsURL, acmeSettings())
	id := register(t, s, "members", "ann@example.com", userPassword)
	return s, id, signIn(t, s, "members", "ann@example.com", userPassword)["token"].(string)
}

func TestPasskeyRegisterAndSignIn(t *testing.T) {
	t.Parallel()
	s, annID, ann := pkNode(t, apitest.Options{})
	dev := newPasskeyDevice(acmeRP())

	opts, ticket := pkOptions(t, s, pkURL("members", "register/options"), nil, bearer(ann))
	var o struct {
		PublicKey struct {
			RP struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"rp"`
			User struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"user"`
			Challenge string `json:"challenge"`
			Timeout   int    `json:"timeout"`
			Selection struct {
				UserVerification string `json:"userVerification"`
				ResidentKey      string `json:"residentKey"`
			} `json:"authenticatorSelection"`
			Exclude []any `json:"excludeCredentials"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal([]byte(opts), &o); err != nil {
		t.Fatal(err)
	}
	pub := o.PublicKey
	if pub.RP.ID != "app.acme.test" || pub.RP.Name != "app.acme.test" || pub.User.Name != "ann@example.com" || len(pub.Challenge) < 22 ||
		pub.Timeout != 300000 || pub.Selection.UserVerification != "required" || pub.Selection.ResidentKey != "preferred" || len(pub.Exclude) != 0 {
		t.Fatalf("registration options %s", opts)
	}
	answer := dev.attest(t, opts)
	pk := data(t, s, 200, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": answer, "name": " Laptop "}, bearer(ann))
	if pk["name"] != "Laptop" || pk["id"] == nil || pk["credential_id"] == "" || pk["last_used"] != nil || pk["backed_up"] != false || apitest.Int(t, pk["created"]) == 0 {
		t.Fatalf("registered passkey %v", pk)
	}
	t.Run("the ticket is spent", func(t *testing.T) {
		e := data(t, s, 400, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": answer}, bearer(ann))
		if e["error"] != "Invalid or expired passkey ticket" {
			t.Fatalf("replay: %v", e)
		}
	})
	t.Run("the next options exclude it", func(t *testing.T) {
		opts, _ := pkOptions(t, s, pkURL("members", "register/options"), nil, bearer(ann))
		if !strings.Contains(opts, `"excludeCredentials":[{"id":"`+pk["credential_id"].(string)+`","type":"public-key"}]`) {
			t.Fatalf("options %s do not exclude %s", opts, pk["credential_id"])
		}
	})

	t.Run("sign-in by email", func(t *testing.T) {
		opts, ticket := pkOptions(t, s, pkURL("members", "login/options"), map[string]any{"email": "ANN@example.com"}, nil)
		if !strings.Contains(opts, `"allowCredentials":[{"id":"`+pk["credential_id"].(string)+`","type":"public-key"}]`) ||
			!strings.Contains(opts, `"rpId":"app.acme.test"`) || !strings.Contains(opts, `"userVerification":"required"`) {
			t.Fatalf("sign-in options %s", opts)
		}
		res, body := s.Do(t, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
		if res.StatusCode != 200 {
			t.Fatalf("verify: %d %s", res.StatusCode, body)
		}
		d := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
		if apitest.Obj(t, d["record"])["id"] != annID || d["mfa_required"] != nil {
			t.Fatalf("session %v", d)
		}
		if c := res.Cookies(); len(c) != 1 || c[0].Name != "svc_user_token" || c[0].Value != d["token"] {
			t.Fatalf("cookies %v", c)
		}
		if me := data(t, s, 200, "GET", "/api/v1/auth/me", nil, bearer(d["token"].(string))); me["id"] != annID {
			t.Fatalf("me %v", me)
		}
		e := data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
		if e["error"] != "Invalid or expired passkey ticket" {
			t.Fatalf("the ticket again: %v", e)
		}
	})
	t.Run("discoverable sign-in", func(t *testing.T) {
		opts, _ := pkOptions(t, s, pkURL("members", "login/options"), nil, nil)
		if strings.Contains(opts, "allowCredentials") {
			t.Fatalf("discoverable options list credentials: %s", opts)
		}
		d := dev.signIn(t, s, s, "members", "")
		if apitest.Obj(t, d["record"])["id"] != annID {
			t.Fatalf("session %v", d)
		}
	})
	t.Run("the list shows the last use", func(t *testing.T) {
		res, body := s.Do(t, "GET", pkURL("members", "credentials"), nil, bearer(ann))
		l := apitest.List(t, apitest.DecodeMap(t, body)["data"])
		if res.StatusCode != 200 || len(l) != 1 {
			t.Fatalf("list: %d %s", res.StatusCode, body)
		}
		got := apitest.Obj(t, l[0])
		if got["id"] != pk["id"] || got["name"] != "Laptop" || got["last_used"] == nil || apitest.Int(t, got["last_used"]) < apitest.Int(t, got["created"]) {
			t.Fatalf("listed %v", got)
		}
	})
	_ = time.Second
}
