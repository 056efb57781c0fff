package token

import (
	"strings"
	"testing"
	"time"
)

func TestIssueVerify(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	s, err := NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSigner([]byte(strings.Repeat("o", 32)))
	now := time.Now()
	tok, jti, err := s.Issue(Claims{ID: "adm_x", Email: "a@b.c"}, AudAdmin, now, time.Hour)
	if err != nil || jti == "" {
		t.Fatal(err)
	}
	c, err := s.Verify(tok, AudAdmin)
	if err != nil || c.ID != "adm_x" || c.RegisteredClaims.ID != jti || c.Issuer != Issuer {
		t.Fatalf("verify: %v %+v", err, c)
	}
	expired, _, _ := s.Issue(Claims{ID: "adm_x"}, AudAdmin, now.Add(-2*time.Hour), time.Hour)
	cases := map[string]struct{ tok, aud string }{
		"wrong audience": {tok, AudUser},
		"expired":        {expired, AudAdmin},
		"garbage":        {"abc.def.ghi", AudAdmin},
		"tampered":       {tok[:len(tok)-2] + "xx", AudAdmin},
	}
	for name, tc := range cases {
		if _, err := s.Verify(tc.tok, tc.aud); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := other.Verify(tok, AudAdmin); err == nil {
		t.Error("token verified under another key")
	}
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Error("short key accepted")
	}
}

func TestVerifyAny(t *testing.T) {
	s, _ := NewSigner(make([]byte, 32))
	now := time.Now()
	tok, _, _ := s.Issue(Claims{ID: "u1"}, AudUser, now, time.Hour)
	if c, aud, err := s.VerifyAny(tok, AudAdmin, AudUser); err != nil || aud != AudUser || c.ID != "u1" {
		t.Fatalf("VerifyAny = %v %q %v", c, aud, err)
	}
	if _, _, err := s.VerifyAny(tok, AudAdmin, AudAPI); err == nil {
		t.Fatal("a user token passed as admin or api")
	}
	other, _ := NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if _, _, err := other.VerifyAny(tok, AudUser); err == nil {
		t.Fatal("a token signed with another key passed")
	}
}

// TestStrictSignatureEncoding: a signature whose last base64 character
// differs only in bits the encoding does not use decodes to the same bytes;
// strict decoding refuses it, so one token has exactly one spelling.
func TestStrictSignatureEncoding(t *testing.T) {
	s, _ := NewSigner(make([]byte, 32))
	tok, _, _ := s.Issue(Claims{ID: "u1"}, AudUser, time.Now(), time.Hour)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	// 32 signature bytes take 43 characters: the last one carries 4 bits
	// and 2 unused ones.
	twin := tok[:len(tok)-1] + string(alphabet[last^1])
	if _, err := s.Verify(twin, AudUser); err == nil {
		t.Fatal("a signature spelled with different unused bits verified")
	}
	if _, err := s.Verify(tok, AudUser); err != nil {
		t.Fatal(err)
	}
}

// TestClockLeeway: a token issued by a node whose clock runs a little
// ahead verifies on the others; one from far in the future does not.
func TestClockLeeway(t *testing.T) {
	s, _ := NewSigner(make([]byte, 32))
	ahead, _, _ := s.Issue(Claims{ID: "u1"}, AudUser, time.Now().Add(20*time.Second), time.Hour)
	if _, err := s.Verify(ahead, AudUser); err != nil {
		t.Fatalf("a token from a clock 20 s ahead: %v", err)
	}
	future, _, _ := s.Issue(Claims{ID: "u1"}, AudUser, time.Now().Add(2*time.Minute), time.Hour)
	if _, err := s.Verify(future, AudUser); err == nil {
		t.Fatal("a token issued two minutes in the future verified")
	}
	expired, _, _ := s.Issue(Claims{ID: "u1"}, AudUser, time.Now().Add(-2*time.Hour), time.Hour)
	if _, err := s.Verify(expired, AudUser); err == nil {
		t.Fatal("an expired token verified")
	}
}

// TestWithClock: a signer built with a clock judges expiry and issue
// times by it, not by time.Now.
func TestWithClock(t *testing.T) {
	at := time.Now().Add(10 * time.Hour)
	s, _ := NewSigner(make([]byte, 32), WithClock(func() time.Time { return at }))
	tok, _, _ := s.Issue(Claims{ID: "u1"}, AudUser, at, time.Hour)
	// Issued ten hours ahead of time.Now: only the signer's clock makes
	// it valid.
	if _, err := s.Verify(tok, AudUser); err != nil {
		t.Fatalf("a token of the signer's own clock: %v", err)
	}
	at = at.Add(2 * time.Hour)
	if _, err := s.Verify(tok, AudUser); err == nil {
		t.Fatal("a token expired on the signer's clock verified")
	}
	now, _, _ := s.Issue(Claims{ID: "u1"}, AudUser, time.Now(), time.Hour)
	if _, err := s.Verify(now, AudUser); err == nil {
		t.Fatal("a token expired on the signer's clock (but not on time.Now) verified")
	}
	if plain, _ := NewSigner(make([]byte, 32), WithClock(nil)); plain == nil {
		t.Fatal("WithClock(nil)")
	} else if _, err := plain.Verify(now, AudUser); err != nil {
		t.Fatalf("WithClock(nil) keeps time.Now: %v", err)
	}
}
