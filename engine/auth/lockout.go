package auth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// The login lockout (SPEC.md, auth.lockout.*) counts failed logins per
// email and client IP for the whole cluster: each failure is a command,
// so every node sees the same count and the same lock.

// lockoutKey hashes the email (case-folded) and client IP; the table never
// holds either in the clear.
func lockoutKey(scope, email, ip string) string {
	h := sha256.Sum256([]byte(scope + "\x00" + strings.ToLower(strings.TrimSpace(email)) + "\x00" + ip))
	return hex.EncodeToString(h[:])
}

type lockoutFailCmd struct {
	Key string `json:"key"`
	Now int64  `json:"now"`
	// Max failures before the lock, and its length (seconds): the
	// settings at proposal time.
	Max      int64 `json:"max"`
	Duration int64 `json:"duration"`
}

type lockoutResetCmd struct {
	Key string `json:"key"`
	Now int64  `json:"now"`
}

func (au *Auth) lockoutSettings() (attempts int64, dur time.Duration) {
	attempts, _ = strconv.ParseInt(au.core.Setting("auth.lockout.max_attempts"), 10, 64)
	secs, _ := strconv.ParseInt(au.core.Setting("auth.lockout.duration_seconds"), 10, 64)
	return attempts, time.Duration(max(secs, 60)) * time.Second
}

// LockoutEnabled reports whether failed logins are counted (the
// auth.lockout.max_attempts setting is positive).
func (au *Auth) LockoutEnabled() bool {
	attempts, _ := au.lockoutSettings()
	return attempts > 0
}

// lockedFor is how long key stays locked, per this replica (0 if not).
func (au *Auth) lockedFor(ctx context.Context, key string) time.Duration {
	var until int64
	err := au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT locked_until FROM _svc_lockouts WHERE key = ?`, key).Scan(&until)
	})
	if err != nil {
		return 0
	}
	if t, now := time.Unix(until, 0), au.core.Now(); t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// errLockedOut is the 429 of a tripped lockout.
func errLockedOut(d time.Duration) *engine.Error {
	return &engine.Error{Kind: engine.KindTooManyRequests, Message: "Too many failed login attempts; try again later", RetryAfter: int(d.Seconds()) + 1}
}

// loginFailed counts one failure when the lockout is on.
func (au *Auth) loginFailed(ctx context.Context, key string) {
	max, dur := au.lockoutSettings()
	if max <= 0 {
		return
	}
	if _, _, err := au.core.Propose(ctx, cmdLockoutFail, lockoutFailCmd{Key: key, Now: au.core.Now().Unix(), Max: max, Duration: int64(dur.Seconds())}); err != nil {
		au.core.Logger().Warn("lockout: could not count a failed login", "err", err)
	}
}

// loginSucceeded clears earlier failures of key, if any.
func (au *Auth) loginSucceeded(ctx context.Context, key string) {
	var failures int64
	err := au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT failures FROM _svc_lockouts WHERE key = ?`, key).Scan(&failures)
	})
	if err != nil || failures == 0 {
		return
	}
	if _, _, err := au.core.Propose(ctx, cmdLockoutReset, lockoutResetCmd{Key: key, Now: au.core.Now().Unix()}); err != nil {
		au.core.Logger().Warn("lockout: could not clear failed logins", "err", err)
	}
}

func (au *Auth) applyLockoutFail(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[lockoutFailCmd](cmd)
	if err != nil {
		return nil, err
	}
	var failures, until int64
	err = tx.QueryRow(`SELECT failures, locked_until FROM _svc_lockouts WHERE key = ?`, c.Key).Scan(&failures, &until)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if until > c.Now {
		return nil, nil // already locked: the lock runs its course
	}
	failures++
	if failures >= c.Max {
		failures, until = 0, c.Now+c.Duration
	}
	_, err = tx.Exec(`INSERT INTO _svc_lockouts (key, failures, locked_until, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, locked_until = excluded.locked_until,
		updated = excluded.updated`, c.Key, failures, until, c.Now)
	return nil, err
}

func (au *Auth) applyLockoutReset(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[lockoutResetCmd](cmd)
	if err != nil {
		return nil, err
	}
	// A lock in force stays; failures before a success are forgotten.
	_, err = tx.Exec(`DELETE FROM _svc_lockouts WHERE key = ? AND locked_until <= ?`, c.Key, c.Now)
	return nil, err
}
