package password

import (
	"errors"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// isBcrypt reports whether hash is a bcrypt hash ($2a$, $2b$ or $2y$), the
// format PocketBase stores (imported accounts keep it until they sign in).
func isBcrypt(hash string) bool {
	return strings.HasPrefix(hash, "$2a$") || strings.HasPrefix(hash, "$2b$") || strings.HasPrefix(hash, "$2y$")
}

// VerifyAny reports whether plain matches hash, an argon2id PHC string or
// a bcrypt hash. needsRehash is true when plain matched a hash in a format
// other than argon2id: the caller then stores Hash(plain) in its place.
func VerifyAny(plain, hash string) (ok, needsRehash bool, err error) {
	if !isBcrypt(hash) {
		ok, err = Verify(plain, hash)
		return ok, false, err
	}
	switch err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(plain)); {
	case err == nil:
		return true, true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return false, false, nil
	default:
		return false, false, ErrMalformed
	}
}
