package auth

import "svcd/engine"

// The auth module's internal tables (admins, sessions, tokens, lockouts,
// audit, second factors). Versions 1 to 5 are the baseline every release
// since the first replays: never change them.
func (au *Auth) registerAuthMigrations() {
	au.core.Migration(engine.Migration{Version: 1, Owner: "auth", Stmts: []string{
		`CREATE TABLE _svc_admins (
			id TEXT PRIMARY KEY,
			email TEXT NOT NULL UNIQUE COLLATE NOCASE,
			password TEXT NOT NULL,
			role TEXT NOT NULL,
			created INTEGER NOT NULL,
			updated INTEGER NOT NULL)`,
	}})
	au.core.Migration(engine.Migration{Version: 2, Owner: "auth", Stmts: []string{
		// Revoked token ids, kept until the token would have expired.
		`CREATE TABLE _svc_revoked (jti TEXT PRIMARY KEY, exp INTEGER NOT NULL) WITHOUT ROWID`,
		// Failed logins per hashed (email, client IP), for the lockout.
		`CREATE TABLE _svc_lockouts (key TEXT PRIMARY KEY, failures INTEGER NOT NULL,
			locked_until INTEGER NOT NULL, updated INTEGER NOT NULL) WITHOUT ROWID`,
		// Admin tokens issued before this (unix seconds) are refused:
		// force-logout-all and password changes.
		`ALTER TABLE _svc_admins ADD COLUMN tokens_after INTEGER NOT NULL DEFAULT 0`,
		`CREATE TABLE _svc_admin_sessions (jti TEXT PRIMARY KEY, admin_id TEXT NOT NULL,
			issued_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, ip TEXT NOT NULL,
			user_agent TEXT NOT NULL) WITHOUT ROWID`,
		`CREATE TABLE _svc_api_tokens (id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
			scopes TEXT NOT NULL, admin_id TEXT NOT NULL, created INTEGER NOT NULL,
			expires_at INTEGER NOT NULL)`,
		`CREATE TABLE _svc_audit (id INTEGER PRIMARY KEY, actor_id TEXT NOT NULL, actor_email TEXT NOT NULL,
			method TEXT NOT NULL, path TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL,
			status INTEGER NOT NULL, ip TEXT NOT NULL, at INTEGER NOT NULL)`,
	}})
	au.core.Migration(engine.Migration{Version: 3, Owner: "auth", Stmts: []string{
		// Email OTP tokens: keyed hashes of the link token and the code,
		// wrong codes counted (auth_otp.go).
		`CREATE TABLE _svc_otps (id TEXT PRIMARY KEY, coll TEXT NOT NULL, user_id TEXT NOT NULL,
			token_hash TEXT NOT NULL UNIQUE, code_mac TEXT NOT NULL, attempts INTEGER NOT NULL,
			expires_at INTEGER NOT NULL, created INTEGER NOT NULL)`,
		`CREATE INDEX _svc_otps_user ON _svc_otps (coll, user_id)`,
		// TOTP per account: the sealed secret, on or pending, the last
		// time step used (auth_totp.go).
		`CREATE TABLE _svc_totp (coll TEXT NOT NULL, user_id TEXT NOT NULL, secret TEXT NOT NULL,
			enabled INTEGER NOT NULL, last_step INTEGER NOT NULL, created INTEGER NOT NULL,
			updated INTEGER NOT NULL, PRIMARY KEY (coll, user_id)) WITHOUT ROWID`,
		// Recovery codes: keyed hashes; used_at 0 while unused.
		`CREATE TABLE _svc_recovery_codes (coll TEXT NOT NULL, user_id TEXT NOT NULL, hash TEXT NOT NULL,
			used_at INTEGER NOT NULL, PRIMARY KEY (coll, user_id, hash)) WITHOUT ROWID`,
		// MFA tickets that have been tried: open, consumed or burned
		// (auth_mfa.go).
		`CREATE TABLE _svc_mfa_tickets (jti TEXT PRIMARY KEY, coll TEXT NOT NULL, user_id TEXT NOT NULL,
			state TEXT NOT NULL, attempts INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID`,
	}})
	au.core.Migration(engine.Migration{Version: 5, Owner: "auth", Stmts: []string{
		// Wrong second-factor codes per account over a window (TOTP,
		// recovery and email OTP codes; code_budget.go).
		`CREATE TABLE _svc_code_failures (coll TEXT NOT NULL, user_id TEXT NOT NULL, failures INTEGER NOT NULL,
			window_end INTEGER NOT NULL, PRIMARY KEY (coll, user_id)) WITHOUT ROWID`,
		// The token floor of deleted accounts: an account created again
		// with the same id refuses the old one's tokens
		// (account_cleanup.go).
		`CREATE TABLE _svc_deleted_accounts (coll TEXT NOT NULL, id TEXT NOT NULL, floor INTEGER NOT NULL,
			PRIMARY KEY (coll, id)) WITHOUT ROWID`,
	}})
	au.core.Migration(engine.Migration{Version: auditIndexesVersion, Owner: "auth", Stmts: []string{
		// The audit log's reads (audit.go) filter by time and by actor,
		// newest first: without these, each was a scan of the whole log.
		`CREATE INDEX _svc_audit_at ON _svc_audit (at)`,
		`CREATE INDEX _svc_audit_actor ON _svc_audit (actor_id, id)`,
	}})
}

// auditIndexesVersion is the internal schema version that indexes the
// audit log.
const auditIndexesVersion = 19
