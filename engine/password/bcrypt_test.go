package password

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestVerifyAny: bcrypt hashes (PocketBase's, $2a$/$2b$/$2y$) verify and
// ask for a rehash; argon2id hashes verify as before and do not.
func TestVerifyAny(t *testing.T) {
	b, err := bcrypt.GenerateFromPassword([]byte("12345678"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Hash("12345678", Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 16})
	if err != nil {
		t.Fatal(err)
	}
	y := "$2y$" + string(b[4:]) // PHP's name for the same algorithm
	for _, tc := range []struct {
		name, plain, hash string
		ok, rehash        bool
	}{
		{"bcrypt", "12345678", string(b), true, true},
		{"bcrypt $2y$", "12345678", y, true, true},
		{"bcrypt, wrong password", "12345679", string(b), false, false},
		{"argon2id", "12345678", a, true, false},
		{"argon2id, wrong password", "x", a, false, false},
	} {
		ok, rehash, err := VerifyAny(tc.plain, tc.hash)
		if err != nil || ok != tc.ok || rehash != tc.rehash {
			t.Errorf("%s: VerifyAny = %v, %v, %v; want %v, %v", tc.name, ok, rehash, err, tc.ok, tc.rehash)
		}
	}
	for _, bad := range []string{"$2a$10$short", "$2b$xx$" + string(b[7:]), "plain"} {
		if ok, _, err := VerifyAny("12345678", bad); ok || err == nil {
			t.Errorf("VerifyAny accepted malformed hash %q: %v %v", bad, ok, err)
		}
	}
}
