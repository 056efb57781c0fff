package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svcd/engine/token"
)

// TestRefreshWindows: a session refreshes within auth.refresh.window_seconds
// of its sign-in; an impersonation only within the hour the admin started
// it, however often it was refreshed.
func TestRefreshWindows(t *testing.T) {
	f := newFlowEnv(t, time.Now())
	id := f.user("r@example.com")
	principal := func(authTime time.Time, impersonator string) Principal {
		return Principal{Kind: User, ID: id, Claims: &token.Claims{
			ID: id, Collection: f.e.collection("members").ID, AuthTime: authTime.Unix(), ImpersonatedBy: impersonator,
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
		_, _, err := f.e.Refresh(f.ctx, principal(c.signedIn, c.impersonator))
		if c.ok != (err == nil) || !c.ok && !errors.Is(err, errSessionTooOld) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
