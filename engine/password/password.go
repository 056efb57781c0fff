// Package password owns password hashing: argon2id in the PHC string format,
// verification in constant time, and the dummy work that keeps a login for
// an unknown account as slow as one for a known account.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
	KeyLen  uint32
}

// Default follows OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane).
var Default = Params{Memory: 19 * 1024, Time: 2, Threads: 1, KeyLen: 32}

// ErrMalformed is returned for a stored hash that is not an argon2id PHC string.
var ErrMalformed = errors.New("password: malformed hash")

// Hash returns the PHC string of plain under p with a fresh random salt.
func Hash(plain string, p Params) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: salt: %w", err)
	}
	key := argon2.IDKey([]byte(plain), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// Verify reports whether plain matches the PHC string hash.
func Verify(plain, hash string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrMalformed
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false, ErrMalformed
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, ErrMalformed
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, ErrMalformed
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrMalformed
	}
	got := argon2.IDKey([]byte(plain), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// Burn spends the time of one verification, for accounts that do not exist.
func Burn(plain string, p Params) {
	argon2.IDKey([]byte(plain), []byte("svc-burn-salt-16"), p.Time, p.Memory, p.Threads, p.KeyLen)
}
