package token

import (
	"crypto/hmac"
	"crypto/sha256"
)

// DeriveKey returns a 32-byte key for one purpose, derived from the
// signing key with HMAC-SHA-256: the same on every node (they share the
// signing key), never stored, and unrelated between purposes. The auth
// flows key their stored hashes (recovery codes, OTP codes) and the
// encryption of TOTP secrets with such keys, so a copy of the database
// alone is not enough to use them. A new signing key makes those values
// unreadable, as it makes every token invalid.
func (s *Signer) DeriveKey(purpose string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("svcd derived key\x00"))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}
