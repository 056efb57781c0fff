package totp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Recovery codes.
//
// A code is eight symbols of Crockford's base32 alphabet
// (0123456789ABCDEFGHJKMNPQRSTVWXYZ: no I, L, O or U), shown as XXXX-XXXX.
// Eight symbols of 5 bits are 40 bits from crypto/rand. Input is forgiving
// the way Crockford's decoding is: case is ignored, O is read as 0 and I
// and L as 1, and the dash and spaces may be left out or put anywhere.
//
// Storage: HMAC-SHA-256 under a server-side key, hex encoded. 40 bits are
// plenty against guessing online (the MFA ticket burns after 5 wrong
// attempts) but not against an offline search of a leaked database: 2^40
// unkeyed SHA-256 evaluations take minutes on one GPU. The key (derive it
// from a secret that lives outside the database, such as the JWT signing
// key, and keep it the same on every node) leaves a database dump alone
// with nothing to search. A slow hash (argon2id) is not used because a
// code is compared against up to ten stored hashes per attempt: at the
// 20-50 ms a password verify costs, that is up to half a second of CPU an
// unauthenticated ticket holder could demand per request, while against an
// attacker who also holds the key it only multiplies a 2^40 search by a
// constant.
const (
	RecoveryCodeCount = 10
	recoverySymbols   = 8
	crockford         = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	// MinRecoveryKeyLen is the shortest key the recovery-code hash accepts.
	MinRecoveryKeyLen = 16
)

// ErrRecoveryKey means the recovery-code key is shorter than MinRecoveryKeyLen.
var ErrRecoveryKey = errors.New("totp: recovery code key shorter than 16 bytes")

// GenerateRecoveryCodes returns RecoveryCodeCount distinct new codes in
// their display form XXXX-XXXX.
func GenerateRecoveryCodes() ([]string, error) {
	codes := make([]string, 0, RecoveryCodeCount)
	seen := map[string]bool{}
	for len(codes) < RecoveryCodeCount {
		var b [5]byte // 40 bits: exactly eight 5-bit symbols, no modulo bias
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("totp: recovery codes: %w", err)
		}
		v := uint64(b[0])<<32 | uint64(b[1])<<24 | uint64(b[2])<<16 | uint64(b[3])<<8 | uint64(b[4])
		var s [recoverySymbols + 1]byte
		for i, j := recoverySymbols-1, len(s)-1; i >= 0; i, j = i-1, j-1 {
			if j == 4 {
				s[j] = '-'
				j--
			}
			s[j] = crockford[v&31]
			v >>= 5
		}
		if c := string(s[:]); !seen[c] {
			seen[c] = true
			codes = append(codes, c)
		}
	}
	return codes, nil
}

// NormalizeRecoveryCode returns the canonical XXXX-XXXX form of what a
// user typed, or false when it is not a recovery code: after dropping
// dashes and spaces it must be eight symbols of the alphabet in any case,
// with O, I and L read as 0, 1 and 1.
func NormalizeRecoveryCode(s string) (string, bool) {
	if len(s) > 64 {
		return "", false
	}
	var out [recoverySymbols + 1]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		switch c {
		case 'O':
			c = '0'
		case 'I', 'L':
			c = '1'
		}
		if strings.IndexByte(crockford, c) < 0 || n == recoverySymbols {
			return "", false
		}
		if n == 4 {
			out[n] = '-'
		}
		out[n+n/4] = c
		n++
	}
	if n != recoverySymbols {
		return "", false
	}
	return string(out[:]), true
}

// HashRecoveryCode returns the stored form of a code: hex HMAC-SHA-256
// under key of the normalized code. It fails for a malformed code or a key
// shorter than MinRecoveryKeyLen.
func HashRecoveryCode(key []byte, code string) (string, error) {
	if len(key) < MinRecoveryKeyLen {
		return "", ErrRecoveryKey
	}
	norm, ok := NormalizeRecoveryCode(code)
	if !ok {
		return "", errors.New("totp: not a recovery code")
	}
	return hex.EncodeToString(recoveryMAC(key, norm)), nil
}

// MatchRecoveryCode finds the code among the stored hashes: it returns the
// index of the matching hash, or -1 and false. Every hash is compared, in
// constant time. The caller removes the matched hash (single use).
func MatchRecoveryCode(key []byte, code string, hashes []string) (int, bool) {
	norm, ok := NormalizeRecoveryCode(code)
	if !ok || len(key) < MinRecoveryKeyLen {
		return -1, false
	}
	mac := recoveryMAC(key, norm)
	idx := -1
	for i, h := range hashes {
		stored, err := hex.DecodeString(h)
		if err != nil || len(stored) != len(mac) {
			continue
		}
		if subtle.ConstantTimeCompare(stored, mac) == 1 && idx < 0 {
			idx = i
		}
	}
	return idx, idx >= 0
}

func recoveryMAC(key []byte, norm string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("svcd recovery code v1\x00"))
	m.Write([]byte(norm))
	return m.Sum(nil)
}
