package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"testing"

	"github.com/descope/virtualwebauthn"

	"svcd/api/apitest"
)

// The passkey tests' authenticator: virtualwebauthn makes the answers a
// browser would give (navigator.credentials.create and .get, as JSON) for
// one credential, an EC2 P-256 key, self-attested ("packed"), with user
// presence and verification.

// passkeyDevice is an authenticator holding one passkey, for the relying
// party rp.
type passkeyDevice struct {
	rp   virtualwebauthn.RelyingParty
	auth virtualwebauthn.Authenticator
	cred virtualwebauthn.Credential
}

// acmeRP is the relying party of the tests: app.url https://app.acme.test
// (acmeSettings).
func acmeRP() virtualwebauthn.RelyingParty {
	return virtualwebauthn.RelyingParty{ID: "app.acme.test", Name: "app.acme.test", Origin: "https://app.acme.test"}
}

// acmeSettings point the relying party at https://app.acme.test.
func acmeSettings() map[string]any { return map[string]any{"app.url": "https://app.acme.test"} }

func newPasskeyDevice(rp virtualwebauthn.RelyingParty) *passkeyDevice {
	return &passkeyDevice{rp: rp, auth: virtualwebauthn.NewAuthenticator(), cred: newEC2Credential()}
}

// newEC2Credential is a credential with a P-256 key whose coordinates are
// both 32 bytes long as big-endian integers. virtualwebauthn writes the
// public key's x and y with big.Int.Bytes, which drops leading zero bytes,
// so for about one key in 128 it writes a coordinate of 31 bytes, which a
// relying party rightly refuses; such keys are drawn again.
func newEC2Credential() virtualwebauthn.Credential {
	for {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		if len(key.X.Bytes()) != 32 || len(key.Y.Bytes()) != 32 {
			continue
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			panic(err)
		}
		return virtualwebauthn.NewCredentialWithImportedKey(virtualwebauthn.KeyTypeEC2, der)
	}
}

// pkURL is the path of a passkey endpoint of collection c.
func pkURL(c, rest string) string { return "/api/v1/auth/" + c + "/webauthn/" + rest }

// pkOptions sends an options step and returns the options (as JSON) and
// the ticket.
func pkOptions(t testing.TB, s *apitest.Server, path string, body any, headers map[string]string) (string, string) {
	t.Helper()
	d := data(t, s, 200, "POST", path, body, headers)
	opts, err := json.Marshal(d["options"])
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := d["ticket"].(string)
	if tok == "" {
		t.Fatalf("%s answered no ticket: %v", path, d)
	}
	return string(opts), tok
}

// attest answers registration options with the device's credential.
func (d *passkeyDevice) attest(t testing.TB, opts string) json.RawMessage {
	t.Helper()
	parsed, err := virtualwebauthn.ParseAttestationOptions(opts)
	if err != nil {
		t.Fatalf("registration options %s: %v", opts, err)
	}
	// The user handle comes back in assertions (discoverable sign-in).
	d.auth.Options.UserHandle = []byte(parsed.UserID)
	return json.RawMessage(virtualwebauthn.CreateAttestationResponse(d.rp, d.auth, d.cred, *parsed))
}

// assert answers sign-in options with the device's credential, whatever
// the options allow.
func (d *passkeyDevice) assert(t testing.TB, opts string) json.RawMessage {
	t.Helper()
	parsed, err := virtualwebauthn.ParseAssertionOptions(opts)
	if err != nil {
		t.Fatalf("sign-in options %s: %v", opts, err)
	}
	return json.RawMessage(virtualwebauthn.CreateAssertionResponse(d.rp, d.auth, d.cred, *parsed))
}

// enroll registers the device's passkey for the user of token tok of
// collection c: the options from begin, the verify through finish (two
// nodes of a cluster, or the same node). It returns the passkey.
func (d *passkeyDevice) enroll(t testing.TB, begin, finish *apitest.Server, c, tok, name string) map[string]any {
	t.Helper()
	opts, ticket := pkOptions(t, begin, pkURL(c, "register/options"), nil, bearer(tok))
	return data(t, finish, 200, "POST", pkURL(c, "register/verify"),
		map[string]any{"ticket": ticket, "response": d.attest(t, opts), "name": name}, bearer(tok))
}

// signIn signs in with the device through begin and finish, by email (or
// discoverable when email is ""), and returns the data of the answer.
func (d *passkeyDevice) signIn(t testing.TB, begin, finish *apitest.Server, c, email string) map[string]any {
	t.Helper()
	var body any
	if email != "" {
		body = map[string]any{"email": email}
	}
	opts, ticket := pkOptions(t, begin, pkURL(c, "login/options"), body, nil)
	return data(t, finish, 200, "POST", pkURL(c, "login/verify"), map[string]any{"ticket": ticket, "response": d.assert(t, opts)}, nil)
}

// pkList lists the passkeys of the caller of headers in collection c.
func pkList(t testing.TB, s *apitest.Server, c string, headers map[string]string) []any {
	t.Helper()
	res, body := s.Do(t, "GET", pkURL(c, "credentials"), nil, headers)
	apitest.CheckCommon(t, res, body)
	if res.StatusCode != 200 {
		t.Fatalf("list: %d %s", res.StatusCode, body)
	}
	return apitest.List(t, apitest.DecodeMap(t, body)["data"])
}
