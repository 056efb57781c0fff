package engine

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"svcd/fsm"
)

// migrations are the internal tables, one list of statements per schema
// version. They run through the log (the leader proposes the version its
// binary knows), so every replica builds them at the same index.
var migrations = [][]string{
	1: {
		`CREATE TABLE _svc_collections (
			id TEXT PRIMARY KEY,
			name TEXT NOT NULL UNIQUE COLLATE NOCASE,
			type TEXT NOT NULL,
			version INTEGER NOT NULL,
			data TEXT NOT NULL,
			created INTEGER NOT NULL,
			updated INTEGER NOT NULL)`,
		`CREATE TABLE _svc_admins (
			id TEXT PRIMARY KEY,
			email TEXT NOT NULL UNIQUE COLLATE NOCASE,
			password TEXT NOT NULL,
			role TEXT NOT NULL,
			created INTEGER NOT NULL,
			updated INTEGER NOT NULL)`,
		`CREATE TABLE _svc_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
	},
	2: {
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
	},
	3: {
		// Email OTP tokens: keyed hashes of the link token and the code,
		// wrong codes counted (engine/auth_otp.go).
		`CREATE TABLE _svc_otps (id TEXT PRIMARY KEY, coll TEXT NOT NULL, user_id TEXT NOT NULL,
			token_hash TEXT NOT NULL UNIQUE, code_mac TEXT NOT NULL, attempts INTEGER NOT NULL,
			expires_at INTEGER NOT NULL, created INTEGER NOT NULL)`,
		`CREATE INDEX _svc_otps_user ON _svc_otps (coll, user_id)`,
		// TOTP per account: the sealed secret, on or pending, the last
		// time step used (engine/auth_totp.go).
		`CREATE TABLE _svc_totp (coll TEXT NOT NULL, user_id TEXT NOT NULL, secret TEXT NOT NULL,
			enabled INTEGER NOT NULL, last_step INTEGER NOT NULL, created INTEGER NOT NULL,
			updated INTEGER NOT NULL, PRIMARY KEY (coll, user_id)) WITHOUT ROWID`,
		// Recovery codes: keyed hashes; used_at 0 while unused.
		`CREATE TABLE _svc_recovery_codes (coll TEXT NOT NULL, user_id TEXT NOT NULL, hash TEXT NOT NULL,
			used_at INTEGER NOT NULL, PRIMARY KEY (coll, user_id, hash)) WITHOUT ROWID`,
		// MFA tickets that have been tried: open, consumed or burned
		// (engine/auth_mfa.go).
		`CREATE TABLE _svc_mfa_tickets (jti TEXT PRIMARY KEY, coll TEXT NOT NULL, user_id TEXT NOT NULL,
			state TEXT NOT NULL, attempts INTEGER NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID`,
	},
	4: {
		// Record history of history_enabled collections (engine/
		// history.go); ids follow the log's order on every replica.
		`CREATE TABLE _svc_history (id INTEGER PRIMARY KEY, collection_id TEXT NOT NULL, record_id TEXT NOT NULL,
			op TEXT NOT NULL, at INTEGER NOT NULL, snapshot TEXT NOT NULL, actor_id TEXT NOT NULL,
			actor_type TEXT NOT NULL)`,
		`CREATE INDEX _svc_history_record ON _svc_history (collection_id, record_id, id)`,
	},
	5: {
		// Wrong second-factor codes per account over a window (TOTP,
		// recovery and email OTP codes; engine/code_budget.go).
		`CREATE TABLE _svc_code_failures (coll TEXT NOT NULL, user_id TEXT NOT NULL, failures INTEGER NOT NULL,
			window_end INTEGER NOT NULL, PRIMARY KEY (coll, user_id)) WITHOUT ROWID`,
		// The token floor of deleted accounts: an account created again
		// with the same id refuses the old one's tokens
		// (engine/account_cleanup.go).
		`CREATE TABLE _svc_deleted_accounts (coll TEXT NOT NULL, id TEXT NOT NULL, floor INTEGER NOT NULL,
			PRIMARY KEY (coll, id)) WITHOUT ROWID`,
		// Keys drawn once for the whole cluster and replicated: the ETag
		// key (engine/etag.go), installed from the migrate command.
		`CREATE TABLE _svc_keys (name TEXT PRIMARY KEY, key BLOB NOT NULL) WITHOUT ROWID`,
	},
}

// internalVersionTx is the internal schema version as of the transaction:
// what an old command replayed by a newer binary may touch.
func internalVersionTx(tx *fsm.Tx) (int64, error) {
	var v int64
	err := tx.QueryRow(`SELECT v FROM _svc_meta WHERE k = 'schema_version'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// SchemaVersion is the newest internal schema this binary knows.
func SchemaVersion() int64 { return int64(len(migrations) - 1) }

type migrateCmd struct {
	Version int64 `json:"version"`
	// ETagKey (hex) is installed by the migration to version 5.
	ETagKey string `json:"etag_key,omitempty"`
}

func (e *Engine) readSchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		err := r.QueryRow(`SELECT v FROM _svc_meta WHERE k = 'schema_version'`).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			v = 0
			return nil
		}
		return err
	})
	return v, err
}

// Migrated reports whether this replica's internal tables are at the
// version this binary knows.
func (e *Engine) Migrated() bool { return e.version.Load() >= SchemaVersion() }

// Migrate proposes the internal schema version of this binary if the
// replica is behind it. Only the leader calls it (see scheduler).
func (e *Engine) Migrate(ctx context.Context) error {
	if e.Migrated() {
		return nil
	}
	key, err := newETagKey()
	if err != nil {
		return err
	}
	_, _, err = e.propose(ctx, cmdMigrate, migrateCmd{Version: SchemaVersion(), ETagKey: key})
	return err
}

func (e *Engine) applyMigrate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[migrateCmd](cmd)
	if err != nil {
		return nil, err
	}
	if c.Version > SchemaVersion() {
		return nil, fmt.Errorf("%w: internal schema version %d is newer than this binary's %d: upgrade svcd",
			fsm.ErrHalt, c.Version, SchemaVersion())
	}
	var cur int64
	err = tx.QueryRow(`SELECT v FROM _svc_meta WHERE k = 'schema_version'`).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	for v := cur + 1; v <= c.Version; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecDirect(stmt); err != nil {
				return nil, fmt.Errorf("%w: migration %d: %v", fsm.ErrHalt, v, err)
			}
		}
		if v == etagKeySince && c.ETagKey != "" {
			key, err := hex.DecodeString(c.ETagKey)
			if err != nil || len(key) < 16 {
				return nil, fmt.Errorf("%w: migration %d: malformed etag key", fsm.ErrHalt, v)
			}
			if _, err := tx.Exec(`INSERT INTO _svc_keys (name, key) VALUES (?, ?)`, etagKeyName, key); err != nil {
				return nil, err
			}
		}
	}
	if c.Version > cur {
		if _, err := tx.Exec(`INSERT INTO _svc_meta (k, v) VALUES ('schema_version', ?)
			ON CONFLICT (k) DO UPDATE SET v = excluded.v`, c.Version); err != nil {
			return nil, err
		}
		tx.Emit(fsm.Event{Kind: evMigrate})
	}
	return nil, nil
}
