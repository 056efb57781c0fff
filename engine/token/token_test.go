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
