package auth

import (
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// accountTables hold per-account auth state keyed by (coll, user_id):
// email OTPs, TOTP enrolments, recovery codes, MFA tickets, wrong codes;
// each with the internal schema version that created it (a delete replayed
// from before that version finds no such table).
var accountTables = [...]struct {
	name  string
	since int64
}{{"_svc_otps", 3}, {"_svc_totp", 3}, {"_svc_recovery_codes", 3}, {"_svc_mfa_tickets", 3}, {"_svc_code_failures", 5}}

// dropAccountState deletes the auth state of user id of auth collection
// collID, or of every user of it when id is "", in the apply transaction
// of the delete that removes them.
func dropAccountState(tx *fsm.Tx, collID, id string) error {
	v, err := engine.InternalVersionTx(tx)
	if err != nil {
		return err
	}
	for _, t := range accountTables {
		if v < t.since {
			continue
		}
		q, args := "DELETE FROM "+t.name+" WHERE coll = ?", []any{collID}
		if id != "" {
			q, args = q+" AND user_id = ?", append(args, id)
		}
		if _, err := tx.Exec(q, args...); err != nil {
			return err
		}
	}
	return nil
}

// A deleted account's tokens must not come back when an account is
// created again with the same id (a client may choose record ids). The
// delete leaves the account's token floor behind in _svc_deleted_accounts:
// every token the account could have been issued is dated at or before
// it. The next account created with that id starts with password_reset_at
// at the floor, so Authenticate refuses those tokens, and its own sessions
// are dated after it (issueAfter). Floors older than any token's lifetime
// are dropped.

// deletedFloorsKept is how long a deleted account's floor is kept: longer
// than any session may last.
const deletedFloorsKept = 400 * 24 * 3600

// accountLifecycle keeps the token floors of auth record row of ci in step
// with its creation and deletion, inside the change's transaction.
func accountLifecycle(tx *fsm.Tx, kind string, ci *engine.Coll, row []any, at int64) error {
	if kind == engine.EvRecordUpdate {
		return nil
	}
	if v, err := engine.InternalVersionTx(tx); err != nil || v < 5 {
		return err
	}
	id := engine.AsString(row[0])
	if kind == engine.EvRecordDelete {
		if _, err := tx.Exec(`DELETE FROM _svc_deleted_accounts WHERE floor < ?`, at-deletedFloorsKept); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO _svc_deleted_accounts (coll, id, floor) VALUES (?, ?, ?)
			ON CONFLICT (coll, id) DO UPDATE SET floor = max(floor, excluded.floor)`,
			ci.ID, id, engine.TokenFloorAfter(row[ci.RowIndex("password_reset_at")], at))
		return err
	}
	var floor int64
	err := tx.QueryRow(`DELETE FROM _svc_deleted_accounts WHERE coll = ? AND id = ? RETURNING floor`, ci.ID, id).Scan(&floor)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	floor = max(floor, engine.AsInt64(row[ci.RowIndex("password_reset_at")]))
	if _, err := tx.Exec(`UPDATE `+ci.Table()+` SET password_reset_at = ? WHERE id = ?`, floor, id); err != nil {
		return err
	}
	row[ci.RowIndex("password_reset_at")] = floor // the row the creator sees
	return nil
}

// registerAccountHooks keeps account state (sessions' floors, second
// factors, codes) in step with auth records and collections.
func (au *Auth) registerAccountHooks() {
	au.core.OnRecordWrite(engine.RecordHook{Name: "accounts", Apply: func(tx *fsm.Tx, w *engine.RecordWrite) error {
		if w.Coll.Type != schema.TypeAuth {
			return nil
		}
		if w.Kind == engine.EvRecordDelete {
			if err := dropAccountState(tx, w.Coll.ID, engine.AsString(w.Row[0])); err != nil {
				return err
			}
		}
		return accountLifecycle(tx, w.Kind, w.Coll, w.Row, w.At)
	}})
	au.core.OnCollectionChange(engine.CollectionHook{Name: "accounts", Apply: func(tx *fsm.Tx, c engine.CollectionChange) error {
		if c.New != nil || c.Old.Type != schema.TypeAuth {
			return nil
		}
		return dropAccountState(tx, c.Old.ID, "")
	}})
}
