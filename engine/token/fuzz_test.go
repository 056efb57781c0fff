package token

import (
	"strings"
	"testing"
	"time"
)

// FuzzVerify: no input makes verification panic, and a one-byte change
// of a token the signer issued never verifies (strict base64: not even a
// change to the unused bits of the last character).
func FuzzVerify(f *testing.F) {
	s, _ := NewSigner([]byte("fuzz-key-fuzz-key-fuzz-key-fuzz!"))
	valid, _, _ := s.Issue(Claims{ID: "u1", Email: "a@b.c", Collection: "col"}, AudUser, time.Now(), time.Hour)
	f.Add("x", 0, byte('x'))
	f.Add("", 0, byte(0))
	f.Add("a.b.c", 1, byte('.'))
	f.Add("eyJhbGciOiJub25lIn0.eyJpZCI6InUxIn0.", 3, byte('A'))
	f.Fuzz(func(t *testing.T, raw string, pos int, b byte) {
		s.VerifyAny(raw, AudUser, AudAdmin, AudAPI, AudFile)
		cand := mutate(valid, pos, b)
		if c, aud, err := s.VerifyAny(cand, AudUser, AudAdmin, AudAPI, AudFile); err == nil && cand != valid {
			t.Fatalf("a changed token verified: %q (aud %s, claims %+v)", cand, aud, c)
		}
	})
}

// mutate changes one byte of tok (a no-op change is skipped by the caller
// comparing with the original).
func mutate(tok string, pos int, b byte) string {
	if tok == "" {
		return tok
	}
	if pos < 0 {
		pos = -pos
	}
	pos %= len(tok)
	if tok[pos] == b {
		return tok
	}
	var sb strings.Builder
	sb.WriteString(tok[:pos])
	sb.WriteByte(b)
	sb.WriteString(tok[pos+1:])
	return sb.String()
}
