package auth

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"svcd/fsm"
)

// TestAdminBcryptRehash: an admin whose stored hash is bcrypt (a
// PocketBase superuser after an import; written here through the log by
// the admin update command) signs in with the password; the stored hash
// and the admins' cache become argon2id, the password keeps working, a
// wrong one is refused, and a session opened before the rehash survives it.
func TestAdminBcryptRehash(t *testing.T) {
	f := newFlowEnv(t, time.Now())
	ad := f.a.Admins()
	a, _, err := ad.CreateOwner(f.ctx, "root@example.com", "a-long-password-1")
	f.ok(err)
	bh, err := bcrypt.GenerateFromPassword([]byte("12345678"), bcrypt.MinCost)
	f.ok(err)
	h := string(bh)
	_, _, err = f.e.Propose(f.ctx, cmdAdminUpdate, adminUpdateCmd{ID: a.ID, Hash: &h, Now: f.clk.now().Unix()})
	f.ok(err)
	if got := ad.AdminByID(a.ID).hash; got != h {
		t.Fatalf("the admin's hash is %q, want the bcrypt one", got)
	}
	if _, err := ad.LoginAdmin(f.ctx, "root@example.com", "12345679", ClientInfo{}); err == nil {
		t.Fatal("a wrong password signed in against the bcrypt hash")
	}
	s, err := ad.LoginAdmin(f.ctx, "root@example.com", "12345678", ClientInfo{})
	f.ok(err)
	var stored string
	f.ok(f.e.Store().View(f.ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT password FROM _svc_admins WHERE id = ?`, a.ID).Scan(&stored)
	}))
	if !strings.HasPrefix(stored, "$argon2id$") || !strings.HasPrefix(ad.AdminByID(a.ID).hash, "$argon2id$") {
		t.Fatalf("after the sign-in: stored %q, cached %q", stored, ad.AdminByID(a.ID).hash)
	}
	if _, err := f.a.Authenticate(f.ctx, s.Token); err != nil {
		t.Fatalf("the session of the rehashing sign-in: %v", err)
	}
	if _, err := ad.LoginAdmin(f.ctx, "root@example.com", "12345678", ClientInfo{}); err != nil {
		t.Fatalf("sign-in against the argon2id rehash: %v", err)
	}
}
