package passkey_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"

	"svcd/api/passkey"
	"svcd/engine/auth"
)

// The protocol alone, against a virtual authenticator: what it answers,
// what it refuses and how (engine/auth maps the refusals to statuses; the
// API tests run it through a node).

func rp() auth.RelyingParty {
	return auth.RelyingParty{ID: "acme.test", Name: "Acme", Origins: []string{"https://app.acme.test"}, Timeout: 5 * time.Minute}
}

func vrp(origin string) virtualwebauthn.RelyingParty {
	return virtualwebauthn.RelyingParty{ID: "acme.test", Name: "Acme", Origin: origin}
}

// refusal asserts that err is a refusal of the given kind.
func refusal(t *testing.T, err error, config, malformed bool) {
	t.Helper()
	var r *auth.PasskeyRefusal
	if !errors.As(err, &r) || r.Config != config || r.Malformed != malformed || r.Reason == "" {
		t.Fatalf("want a refusal (config %v, malformed %v), got %#v", config, malformed, err)
	}
}

// enrolled registers a new credential of a fresh authenticator for user
// id "u1" and returns the authenticator, the credential and the user
// with the stored passkey.
func enrolled(t *testing.T) (virtualwebauthn.Authenticator, virtualwebauthn.Credential, *auth.PasskeyUser) {
	t.Helper()
	var p passkey.Protocol
	user := &auth.PasskeyUser{ID: "u1", Name: "ann@example.com"}
	opts, err := p.BeginRegistration(rp(), user)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := virtualwebauthn.ParseAttestationOptions(string(opts.Options))
	if err != nil {
		t.Fatal(err)
	}
	if parsed.UserID != "u1" || parsed.RelyingPartyID != "acme.test" || parsed.UserName != "ann@example.com" {
		t.Fatalf("options %s", opts.Options)
	}
	a := virtualwebauthn.NewAuthenticatorWithOptions(virtualwebauthn.AuthenticatorOptions{UserHandle: []byte("u1")})
	c := ec2Credential(t)
	c.Counter = 7
	got, err := p.FinishRegistration(rp(), user, opts.Session, []byte(virtualwebauthn.CreateAttestationResponse(vrp("https://app.acme.test"), a, c, *parsed)))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.CredentialID) != string(c.ID) || got.SignCount != 7 || got.BackedUp || len(got.Record) == 0 {
		t.Fatalf("new passkey %+v", got)
	}
	user.Credentials = []auth.StoredPasskey{{Record: got.Record, SignCount: got.SignCount}}
	return a, c, user
}

func TestRoundTrip(t *testing.T) {
	var p passkey.Protocol
	a, c, user := enrolled(t)
	owner := func(id []byte) (*auth.PasskeyUser, error) {
		if string(id) != string(c.ID) {
			return nil, nil
		}
		return user, nil
	}
	for _, u := range []*auth.PasskeyUser{user, nil} {
		opts, err := p.BeginLogin(rp(), u, nil)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := virtualwebauthn.ParseAssertionOptions(string(opts.Options))
		if err != nil {
			t.Fatal(err)
		}
		if (u != nil) != (len(parsed.AllowCredentials) == 1) {
			t.Fatalf("options for user %v: %s", u, opts.Options)
		}
		c.Counter = 9
		got, err := p.FinishLogin(rp(), opts.Session, []byte(virtualwebauthn.CreateAssertionResponse(vrp("https://app.acme.test"), a, c, *parsed)), owner)
		if err != nil {
			t.Fatal(err)
		}
		if got.UserID != "u1" || got.SignCount != 9 || string(got.CredentialID) != string(c.ID) {
			t.Fatalf("assertion %+v", got)
		}
	}
}

func TestRefusals(t *testing.T) {
	var p passkey.Protocol
	a, c, user := enrolled(t)
	owner := func([]byte) (*auth.PasskeyUser, error) { return user, nil }

	bad := rp()
	bad.ID = ""
	_, err := p.BeginLogin(bad, nil, nil)
	refusal(t, err, true, false)
	bad = rp()
	bad.Origins = nil
	_, err = p.BeginRegistration(bad, user)
	refusal(t, err, true, false)

	opts, err := p.BeginLogin(rp(), nil, []byte("decoy-decoy-decoy-decoy"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := virtualwebauthn.ParseAssertionOptions(string(opts.Options))
	if err != nil || len(parsed.AllowCredentials) != 1 {
		t.Fatalf("decoy options %s: %v", opts.Options, err)
	}
	answer := []byte(virtualwebauthn.CreateAssertionResponse(vrp("https://app.acme.test"), a, c, *parsed))
	_, err = p.FinishLogin(rp(), opts.Session, answer, owner)
	refusal(t, err, false, false) // the credential is not the decoy

	opts, _ = p.BeginLogin(rp(), nil, nil)
	parsed, _ = virtualwebauthn.ParseAssertionOptions(string(opts.Options))
	_, err = p.FinishLogin(rp(), opts.Session, []byte(`{"id":"x"}`), owner)
	refusal(t, err, false, true)
	_, err = p.FinishLogin(rp(), opts.Session, []byte(virtualwebauthn.CreateAssertionResponse(vrp("https://evil.test"), a, c, *parsed)), owner)
	refusal(t, err, false, false)
	_, err = p.FinishLogin(rp(), opts.Session, []byte(virtualwebauthn.CreateAssertionResponse(vrp("https://app.acme.test"), a, c, *parsed)),
		func([]byte) (*auth.PasskeyUser, error) { return nil, nil })
	refusal(t, err, false, false)
	boom := errors.New("replica down")
	if _, err = p.FinishLogin(rp(), opts.Session, []byte(virtualwebauthn.CreateAssertionResponse(vrp("https://app.acme.test"), a, c, *parsed)),
		func([]byte) (*auth.PasskeyUser, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("the owner's error: %v", err)
	}
	// A user handle that is not the passkey's account.
	other := a
	other.Options.UserHandle = []byte("u2")
	_, err = p.FinishLogin(rp(), opts.Session, []byte(virtualwebauthn.CreateAssertionResponse(vrp("https://app.acme.test"), other, c, *parsed)), owner)
	refusal(t, err, false, false)

	// A stored record that does not decode is the node's error, not a
	// refusal, at every step.
	broken := &auth.PasskeyUser{ID: "u1", Credentials: []auth.StoredPasskey{{Record: []byte("{")}}}
	var r *auth.PasskeyRefusal
	if _, err := p.BeginLogin(rp(), broken, nil); err == nil || errors.As(err, &r) {
		t.Fatalf("BeginLogin with a broken record: %v", err)
	}
	if _, err := p.BeginRegistration(rp(), broken); err == nil || errors.As(err, &r) {
		t.Fatalf("BeginRegistration with a broken record: %v", err)
	}
	// The library's own refusals of a step are errors too (the service
	// never asks for a sign-in by an account without passkeys).
	if _, err := p.BeginLogin(rp(), &auth.PasskeyUser{ID: "u1"}, nil); err == nil || errors.As(err, &r) {
		t.Fatalf("BeginLogin for an account without passkeys: %v", err)
	}
}

// ec2Credential is a credential with a P-256 key whose coordinates are
// both 32 bytes long: virtualwebauthn writes x and y with big.Int.Bytes,
// which drops leading zero bytes, so about one key in 128 would carry a
// 31-byte coordinate that go-webauthn rightly refuses.
func ec2Credential(t *testing.T) virtualwebauthn.Credential {
	t.Helper()
	for {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(key.X.Bytes()) != 32 || len(key.Y.Bytes()) != 32 {
			continue
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return virtualwebauthn.NewCredentialWithImportedKey(virtualwebauthn.KeyTypeEC2, der)
	}
}
