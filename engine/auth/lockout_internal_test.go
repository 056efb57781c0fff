package auth

import (
	"errors"
	"testing"
	"time"

	"svcd/engine"
)

// TestLockoutClock: SPEC.md's lockout with the engine's clock: the lock
// lasts auth.lockout.duration_seconds, at least 60 s (a shorter setting is
// raised to it), refuses the right password meanwhile, counts per email
// and client address, and ends on time; a success clears the failures.
func TestLockoutClock(t *testing.T) {
	f := newFlowEnv(t, time.Now())
	f.user("lock@example.com")
	_, _, err := f.e.PatchSettings(f.ctx, []byte(`{"auth.lockout.max_attempts":"2","auth.lockout.duration_seconds":"5"}`))
	f.ok(err)
	login := func(pw, ip string) error {
		_, err := f.a.LoginUser(f.ctx, "members", "lock@example.com", pw, ip)
		return err
	}
	locked := func(err error) bool {
		de := engine.AsError(err)
		return de != nil && de.Kind == engine.KindTooManyRequests
	}
	// One failure, then a success: the count starts again.
	if err := login("wrong-password-1", "10.0.0.1"); !errors.Is(err, ErrInvalidCreds) {
		t.Fatalf("first failure: %v", err)
	}
	f.ok(login("a-long-password-1", "10.0.0.1"))
	if err := login("wrong-password-1", "10.0.0.1"); !errors.Is(err, ErrInvalidCreds) {
		t.Fatalf("failure after a success: %v", err)
	}
	// Second consecutive failure locks.
	if err := login("wrong-password-1", "10.0.0.1"); !errors.Is(err, ErrInvalidCreds) {
		t.Fatalf("locking failure: %v", err)
	}
	if err := login("a-long-password-1", "10.0.0.1"); !locked(err) || engine.AsError(err).RetryAfter < 59 {
		t.Fatalf("right password while locked: %v", err)
	}
	f.ok(login("a-long-password-1", "10.0.0.2")) // another address is not locked
	f.clk.advance(55 * time.Second)
	if err := login("a-long-password-1", "10.0.0.1"); !locked(err) {
		t.Fatalf("after 55 s of a 60 s minimum lock: %v", err)
	}
	f.clk.advance(6 * time.Second)
	f.ok(login("a-long-password-1", "10.0.0.1"))
}
