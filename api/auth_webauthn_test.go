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
}

// A ticket lasts five minutes by the node's clock, and is used once
// however many verifies race for it.
func TestPasskeyTickets(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s, _, ann := pkNode(t, apitest.Options{Clock: clock.Now})
	dev := newPasskeyDevice(acmeRP())
	dev.enroll(t, s, s, "members", ann, "")

	t.Run("expired after five minutes", func(t *testing.T) {
		opts, ticket := pkOptions(t, s, pkURL("members", "login/options"), nil, nil)
		clock.Advance(5*time.Minute + time.Second)
		data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
		opts, ticket = pkOptions(t, s, pkURL("members", "register/options"), nil, bearer(ann))
		clock.Advance(5*time.Minute + time.Second)
		data(t, s, 400, "POST", pkURL("members", "register/verify"), map[string]any{"ticket": ticket, "response": newPasskeyDevice(acmeRP()).attest(t, opts)}, bearer(ann))
	})
	t.Run("within five minutes", func(t *testing.T) {
		ann = signIn(t, s, "members", "ann@example.com", userPassword)["token"].(string)
		opts, ticket := pkOptions(t, s, pkURL("members", "login/options"), map[string]any{"email": "ann@example.com"}, nil)
		clock.Advance(4*time.Minute + 59*time.Second)
		data(t, s, 200, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
	})
	t.Run("racing verifies: one wins", func(t *testing.T) {
		opts, ticket := pkOptions(t, s, pkURL("members", "login/options"), nil, nil)
		body := map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}
		const n = 8
		codes := make(chan int, n)
		for range n {
			go func() {
				res, _, err := s.Send("POST", pkURL("members", "login/verify"), body, nil)
				if err != nil {
					codes <- 0
					return
				}
				codes <- res.StatusCode
			}()
		}
		won := 0
		for range n {
			switch c := <-codes; c {
			case 200:
				won++
			case 401:
			default:
				t.Errorf("a racing verify answered %d", c)
			}
		}
		if won != 1 {
			t.Fatalf("%d verifies of one ticket succeeded", won)
		}
	})
}

// The sign counter: when the stored one and the new one are both
// non-zero, the new one must be greater; 0 is always accepted (synced
// passkeys report 0).
func TestPasskeySignCounter(t *testing.T) {
	t.Parallel()
	s, _, ann := pkNode(t, apitest.Options{})
	dev := newPasskeyDevice(acmeRP())
	dev.cred.Counter = 3
	dev.enroll(t, s, s, "members", ann, "")
	verify := func(counter uint32) (int, map[string]any) {
		t.Helper()
		dev.cred.Counter = counter
		opts, ticket := pkOptions(t, s, pkURL("members", "login/options"), map[string]any{"email": "ann@example.com"}, nil)
		res, body := s.Do(t, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
		return res.StatusCode, apitest.DecodeMap(t, body)
	}
	for _, step := range []struct {
		counter uint32
		want    int
	}{
		{3, 401},  // equal to the registered 3
		{2, 401},  // below it
		{4, 200},  // above it
		{4, 401},  // the same again
		{0, 200},  // no counter: accepted
		{0, 200},  // again
		{4, 401},  // the largest seen stays 4
		{10, 200}, // a jump is fine
	} {
		st, body := verify(step.counter)
		if st != step.want {
			t.Fatalf("counter %d: %d %v, want %d", step.counter, st, body, step.want)
		}
		if st == 401 && !strings.Contains(apitest.Obj(t, body["details"])["response"].(string), "sign counter did not increase") {
			t.Fatalf("counter %d refused with %v", step.counter, body)
		}
	}
	t.Run("a synced passkey that never counts", func(t *testing.T) {
		s.CreateCollection(t, coll("staff", "auth", nil, "create_rule", ""))
		register(t, s, "staff", "sam@example.com", userPassword)
		sam := signIn(t, s, "staff", "sam@example.com", userPassword)["token"].(string)
		synced := newPasskeyDevice(acmeRP())
		synced.auth.Options.BackupEligible, synced.auth.Options.BackupState = true, true
		if pk := synced.enroll(t, s, s, "staff", sam, "Phone"); pk["backed_up"] != true {
			t.Fatalf("passkey %v", pk)
		}
		for range 3 {
			synced.signIn(t, s, s, "staff", "sam@example.com")
		}
	})
}

// A passkey is a strong factor by itself: an account with TOTP on gets a
// session from a passkey sign-in, no MFA ticket.
func TestPasskeyWithTOTP(t *testing.T) {
	t.Parallel()
	s, annID, ann := pkNode(t, apitest.Options{})
	dev := newPasskeyDevice(acmeRP())
	dev.enroll(t, s, s, "members", ann, "")
	secret := data(t, s, 200, "POST", "/api/v1/auth/members/totp/setup", nil, bearer(ann))["secret"].(string)
	data(t, s, 200, "POST", "/api/v1/auth/members/totp/confirm", map[string]any{"code": oathCode(t, secret, time.Now())}, bearer(ann))
	mfaTicket(t, s, "ann@example.com") // a password sign-in asks for the code
	for _, email := range []string{"ann@example.com", ""} {
		d := dev.signIn(t, s, s, "members", email)
		if d["token"] == nil || d["mfa_required"] != nil || apitest.Obj(t, d["record"])["id"] != annID {
			t.Fatalf("passkey sign-in of a TOTP account: %v", d)
		}
	}
}

// An email without passkeys gets options of the same shape, listing a
// decoy that stays the same: they do not tell whether the account
// exists. No answer to them signs anyone in.
func TestPasskeyDecoys(t *testing.T) {
	t.Parallel()
	s, _, ann := pkNode(t, apitest.Options{})
	register(t, s, "members", "bob@example.com", userPassword) // an account without passkeys
	dev := newPasskeyDevice(acmeRP())
	real := dev.enroll(t, s, s, "members", ann, "")["credential_id"].(string)
	allowed := func(email string) []string {
		t.Helper()
		opts, _ := pkOptions(t, s, pkURL("members", "login/options"), map[string]any{"email": email}, nil)
		var o struct {
			PublicKey struct {
				Allow []struct{ ID, Type string } `json:"allowCredentials"`
			} `json:"publicKey"`
		}
		if err := json.Unmarshal([]byte(opts), &o); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range o.PublicKey.Allow {
			if a.Type != "public-key" || len(a.ID) != 43 && a.ID != real {
				t.Fatalf("%s: allowed %+v", email, a)
			}
			ids = append(ids, a.ID)
		}
		return ids
	}
	if got := allowed("ann@example.com"); len(got) != 1 || got[0] != real {
		t.Fatalf("ann's options allow %v", got)
	}
	bob, nobody := allowed("bob@example.com"), allowed("nobody@example.com")
	if len(bob) != 1 || len(nobody) != 1 || bob[0] == nobody[0] || bob[0] == real || nobody[0] == real {
		t.Fatalf("decoys: bob %v, nobody %v", bob, nobody)
	}
	if again := allowed("Nobody@Example.com"); again[0] != nobody[0] {
		t.Fatalf("the decoy of an email changed: %v then %v", nobody, again)
	}
	// Ann's passkey answering a decoy ceremony signs nobody in.
	opts, ticket := pkOptions(t, s, pkURL("members", "login/options"), map[string]any{"email": "bob@example.com"}, nil)
	data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
	// Nor a ceremony bound to another account.
	bobDev := newPasskeyDevice(acmeRP())
	bobDev.enroll(t, s, s, "members", signIn(t, s, "members", "bob@example.com", userPassword)["token"].(string), "")
	opts, ticket = pkOptions(t, s, pkURL("members", "login/options"), map[string]any{"email": "bob@example.com"}, nil)
	data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
	// Nor a passkey of one collection in another.
	s.CreateCollection(t, coll("staff", "auth", nil, "create_rule", ""))
	opts, ticket = pkOptions(t, s, pkURL("staff", "login/options"), nil, nil)
	data(t, s, 401, "POST", pkURL("staff", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
}

// The credentials: each user sees, renames and deletes only their own;
// a deleted passkey signs nobody in; deleting the account deletes them.
func TestPasskeyCredentials(t *testing.T) {
	t.Parallel()
	s, annID, ann := pkNode(t, apitest.Options{})
	register(t, s, "members", "bob@example.com", userPassword)
	bob := bearer(signIn(t, s, "members", "bob@example.com", userPassword)["token"].(string))
	laptop, phone := newPasskeyDevice(acmeRP()), newPasskeyDevice(acmeRP())
	a := laptop.enroll(t, s, s, "members", ann, "Laptop")
	b := phone.enroll(t, s, s, "members", ann, "")
	bobs := newPasskeyDevice(acmeRP()).enroll(t, s, s, "members", bob["Authorization"][len("Bearer "):], "Bob's")
	if b["name"] != "Passkey" {
		t.Fatalf("an unnamed passkey is called %v", b["name"])
	}
	if l := pkList(t, s, "members", bearer(ann)); len(l) != 2 || apitest.Obj(t, l[0])["id"] != a["id"] || apitest.Obj(t, l[1])["id"] != b["id"] {
		t.Fatalf("ann's list %v", l)
	}
	if l := pkList(t, s, "members", bob); len(l) != 1 || apitest.Obj(t, l[0])["name"] != "Bob's" {
		t.Fatalf("bob's list %v", l)
	}
	one := pkURL("members", "credentials/"+a["id"].(string))
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "bob cannot rename ann's", Method: "PATCH", URL: one, Headers: bob, Body: map[string]any{"name": "mine"}, ExpectedStatus: 404,
			ExpectedContent: []string{"Passkey not found"}},
		{Name: "nor delete it", Method: "DELETE", URL: one, Headers: bob, ExpectedStatus: 404},
		{Name: "a blank name: 422", Method: "PATCH", URL: one, Headers: bearer(ann), Body: map[string]any{"name": "  "}, ExpectedStatus: 422,
			AfterFunc: apitest.Details("name")},
		{Name: "a long name: 422", Method: "PATCH", URL: one, Headers: bearer(ann), Body: map[string]any{"name": strings.Repeat("x", 101)}, ExpectedStatus: 422},
		{Name: "a control character: 422", Method: "PATCH", URL: one, Headers: bearer(ann), Body: map[string]any{"name": "a\nb"}, ExpectedStatus: 422},
		{Name: "ann renames it", Method: "PATCH", URL: one, Headers: bearer(ann), Body: map[string]any{"name": "Work laptop"}, ExpectedStatus: 200,
			ExpectedContent: []string{`"name":"Work laptop"`, `"id":"` + a["id"].(string) + `"`}, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"}},
		{Name: "and deletes it", Method: "DELETE", URL: one, Headers: bearer(ann), ExpectedStatus: 204},
		{Name: "again: 404", Method: "DELETE", URL: one, Headers: bearer(ann), ExpectedStatus: 404},
		{Name: "an unknown id: 404", Method: "PATCH", URL: pkURL("members", "credentials/nosuchpasskey12"), Headers: bearer(ann),
			Body: map[string]any{"name": "x"}, ExpectedStatus: 404},
	})
	if l := pkList(t, s, "members", bob); len(l) != 1 || apitest.Obj(t, l[0])["id"] != bobs["id"] {
		t.Fatalf("bob's list after ann's changes %v", l)
	}
	// The deleted passkey signs nobody in; the other one does.
	opts, ticket := pkOptions(t, s, pkURL("members", "login/options"), nil, nil)
	data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": laptop.assert(t, opts)}, nil)
	phone.signIn(t, s, s, "members", "ann@example.com")

	// Deleting the account deletes its passkeys: an account created again
	// with the same id has none, and the old passkey opens nothing.
	s.MustAdmin(t, 204, "DELETE", "/api/v1/members/"+annID, nil)
	opts, ticket = pkOptions(t, s, pkURL("members", "login/options"), nil, nil)
	data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": phone.assert(t, opts)}, nil)
	s.CreateRecord(t, "members", map[string]any{"id": annID, "email": "ann2@example.com", "password": userPassword})
	again := bearer(signIn(t, s, "members", "ann2@example.com", userPassword)["token"].(string))
	if l := pkList(t, s, "members", again); len(l) != 0 {
		t.Fatalf("the new account has the old one's passkeys: %v", l)
	}
	opts, ticket = pkOptions(t, s, pkURL("members", "login/options"), nil, nil)
	data(t, s, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": phone.assert(t, opts)}, nil)

	t.Run("at most 20 per account", func(t *testing.T) {
		tok := bob["Authorization"][len("Bearer "):]
		for range maxPasskeysPerAccount - 1 {
			newPasskeyDevice(acmeRP()).enroll(t, s, s, "members", tok, "")
		}
		data(t, s, 422, "POST", pkURL("members", "register/options"), nil, bob)
	})
}

// maxPasskeysPerAccount is engine/auth's cap.
const maxPasskeysPerAccount = 20
