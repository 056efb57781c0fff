package engine

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"svcd/fsm"
)

// Internal tables are built by migrations: numbered statement lists that
// run through the log (the leader proposes the newest version its binary
// knows), so every replica builds them at the same index. The core and
// each module register theirs (Engine.Migration) with a version number
// from one sequence shared by all of them; one version may hold
// statements of several owners, run in the order they were registered.
// A version that a release shipped is never changed: a new table or column
// takes the next number (DESIGN.md lists them).

// Migration is one owner's statements of one internal schema version.
type Migration struct {
	Version int64
	Owner   string // "core", "auth", "history", ...
	Stmts   []string
}

// Migration registers m.
func (e *Engine) Migration(m Migration) {
	e.reg.mustOpen("migration " + m.Owner)
	e.reg.migrations = append(e.reg.migrations, m)
	e.reg.schemaVersion = max(e.reg.schemaVersion, m.Version)
}

// checkMigrations refuses a malformed list.
func checkMigrations(ms []Migration) error {
	for _, m := range ms {
		if m.Version < 1 || m.Owner == "" || len(m.Stmts) == 0 {
			return fmt.Errorf("engine: migration %d of %q: a version from 1, an owner and statements are required", m.Version, m.Owner)
		}
	}
	return nil
}

// migrationStmts are the statements of version v, in registration order.
func (e *Engine) migrationStmts(v int64) []string {
	var out []string
	for _, m := range e.reg.migrations {
		if m.Version == v {
			out = append(out, m.Stmts...)
		}
	}
	return out
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

// SchemaVersion is the newest internal schema version registered.
func (e *Engine) SchemaVersion() int64 { return e.reg.schemaVersion }

// InternalVersion is the internal schema version this replica has
// applied: what a cache may read (a table of a later version does not
// exist yet).
func (e *Engine) InternalVersion() int64 { return e.version.Load() }

// InternalVersionTx is the internal schema version as of the transaction:
// what an old command replayed by a newer binary may touch.
func InternalVersionTx(tx *fsm.Tx) (int64, error) { return internalVersionTx(tx) }

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
func (e *Engine) Migrated() bool { return e.version.Load() >= e.SchemaVersion() }

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
	_, _, err = e.Propose(ctx, cmdMigrate, migrateCmd{Version: e.SchemaVersion(), ETagKey: key})
	return err
}

func (e *Engine) applyMigrate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[migrateCmd](cmd)
	if err != nil {
		return nil, err
	}
	if c.Version > e.SchemaVersion() {
		return nil, fmt.Errorf("%w: internal schema version %d is newer than this binary's %d: upgrade svcd",
			fsm.ErrHalt, c.Version, e.SchemaVersion())
	}
	var key []byte
	if c.ETagKey != "" {
		if key, err = hex.DecodeString(c.ETagKey); err != nil || len(key) < 16 {
			return nil, fmt.Errorf("%w: migration %d: malformed etag key", fsm.ErrHalt, etagKeySince)
		}
	}
	migrated, err := e.migrateTx(tx, c.Version, key)
	if err != nil {
		return nil, err
	}
	if migrated {
		tx.Emit(fsm.Event{Kind: EvMigrate})
	}
	return nil, nil
}

// migrateTx runs the migrations after the transaction's internal schema
// version up to version to, and records it; etagKey is the key the
// migration to etagKeySince installs (nil: none). It reports whether it
// ran any.
func (e *Engine) migrateTx(tx *fsm.Tx, to int64, etagKey []byte) (bool, error) {
	var cur int64
	err := tx.QueryRow(`SELECT v FROM _svc_meta WHERE k = 'schema_version'`).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	for v := cur + 1; v <= to; v++ {
		for _, stmt := range e.migrationStmts(v) {
			if _, err := tx.ExecDirect(stmt); err != nil {
				return false, fmt.Errorf("%w: migration %d: %v", fsm.ErrHalt, v, err)
			}
		}
		if v == etagKeySince && etagKey != nil {
			if _, err := tx.Exec(`INSERT INTO _svc_keys (name, key) VALUES (?, ?)`, etagKeyName, etagKey); err != nil {
				return false, err
			}
		}
	}
	if to <= cur {
		return false, nil
	}
	_, err = tx.Exec(`INSERT INTO _svc_meta (k, v) VALUES ('schema_version', ?)
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`, to)
	return err == nil, err
}
