package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svcd/engine"
	"svcd/engine/token"
)

// TestRefreshWindows: a session refreshes within auth.refresh.window_seconds
// of its sign-in; an impersonation only within the hour the admin started
// it, however often it was refreshed.
func TestRefreshWindows(t *testing.T) {
	f := newFlowEnv(t, time.Now())
	id := f.user("r@example.com")
	principal := func(authTime time.Time, impersonator string) engine.Principal {
		return engine.Principal{Kind: engine.User, ID: id, Claims: &token.Claims{
			ID: id, Collection: f.e.Coll("members").ID, AuthTime: authTime.Unix(), ImpersonatedBy: impersonator,
			RegisteredClaims: jwt.RegisteredClaims{ID: "jti-" + impersonator + authTime.String(), IssuedAt: jwt.NewNumericDate(authTime)},
		}}
	}
	now := f.clk.now()
	cases := []struct {
		name         string
		signedIn     time.Time
		impersonator string
		ok           bool
	}{
		{"session of yesterday", now.Add(-24 * time.Hour), "", true},
		{"session of eight days ago", now.Add(-8 * 24 * time.Hour), "", false},
		{"impersonation of half an hour ago", now.Add(-30 * time.Minute), "adm_x", true},
		{"impersonation of two hours ago", now.Add(-2 * time.Hour), "adm_x", false},
	}
	for _, c := range cases {
		_, _, err := f.a.Refresh(f.ctx, principal(c.signedIn, c.impersonator))
		if c.ok != (err == nil) || !c.ok && !errors.Is(err, errSessionTooOld) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestSameSecondInvalidation: a password reset or a force-logout refuses
// every token issued before it, including those of its own second; a
// token signed right after it, in that second, works.
func TestSameSecondInvalidation(t *testing.T) {
	f := newFlowEnv(t, time.Now())
	uid := f.user("s@example.com")
	old := f.login("s@example.com").Token
	f.principal(old)
	reset, _, err := f.a.signer.Issue(token.Claims{ID: uid, Email: "s@example.com", Collection: f.e.Coll("members").ID}, audReset, f.clk.now(), resetTTL)
	f.ok(err)
	_, err = f.a.ConfirmPasswordReset(f.ctx, "members", reset, "a-long-password-1")
	f.ok(err)
	if _, err := f.a.Authenticate(f.ctx, old); err == nil {
		t.Fatal("a token of the reset's second survived it")
	}
	fresh := f.login("s@example.com").Token
	if p := f.principal(fresh); p.Claims.IssuedAt.Unix() != f.clk.now().Unix()+1 {
		t.Fatalf("fresh token dated %v, now %v", p.Claims.IssuedAt, f.clk.now())
	}

	_, _, err = f.a.adm.CreateOwner(f.ctx, "o@example.com", "owner-password-123")
	f.ok(err)
	s1, err := f.a.adm.LoginAdmin(f.ctx, "o@example.com", "owner-password-123", ClientInfo{})
	f.ok(err)
	f.principal(s1.Token)
	_, err = f.a.adm.LogoutAllAdmins(f.ctx)
	f.ok(err)
	if _, err := f.a.Authenticate(f.ctx, s1.Token); err == nil {
		t.Fatal("an admin token of the force-logout's second survived it")
	}
	s2, err := f.a.adm.LoginAdmin(f.ctx, "o@example.com", "owner-password-123", ClientInfo{})
	f.ok(err)
	f.principal(s2.Token)
	sessions, err := f.a.adm.AdminSessions(f.ctx)
	f.ok(err)
	if len(sessions) != 1 {
		t.Fatalf("sessions after force-logout and a new sign-in: %+v", sessions)
	}
}
