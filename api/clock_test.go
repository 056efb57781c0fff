package api_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// newClock is a test clock for apitest.Options.Clock, standing at a fixed
// instant years away from time.Now: a part of the node that read
// time.Now instead of it would disagree with the rest and show.
func newClock() *apitest.Clock {
	return apitest.NewClock(time.Unix(2_000_000_000, 0))
}

// TestInjectedClock: the node issues tokens, verifies them and ends
// lockouts by apitest.Options.Clock, not by time.Now.
func TestInjectedClock(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	s.CreateCollection(t, usersCollection())
	tok := signUp(t, s, "clock@example.com")

	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Iat, Exp int64 }
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.Iat != clock.Now().Unix() {
		t.Fatalf("iat %d, the clock says %d", c.Iat, clock.Now().Unix())
	}

	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"auth.lockout.max_attempts": "1", "auth.lockout.duration_seconds": "60"})
	s.Do(t, "POST", "/api/v1/auth/users/login", map[string]any{"email": "clock@example.com", "password": "wrong-password-x"}, nil)
	if res, body := s.Do(t, "POST", "/api/v1/auth/users/login", map[string]any{"email": "clock@example.com", "password": userPassword}, nil); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("locked out: %d %s", res.StatusCode, body)
	}
	clock.Advance(61 * time.Second)
	login(t, s, "clock@example.com", userPassword) // the lockout is over

	if res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(tok)); res.StatusCode != http.StatusOK {
		t.Fatalf("token before its expiry: %d %s", res.StatusCode, body)
	}
	clock.Set(time.Unix(c.Exp, 0).Add(time.Minute)) // past the expiry and its leeway
	if res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(tok)); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("token after its expiry on the node's clock: %d %s", res.StatusCode, body)
	}
}
