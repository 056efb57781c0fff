package auth

import (
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// What a restore keeps of the current database (engine/restore.go), so
// that tokens stay valid and every revocation made after the backup stays
// in force:
//
//   - the control plane is the current one: admins (their passwords,
//     roles and sign-out floors), admin sessions, API tokens and the audit
//     log. An admin, or an API token, removed since the backup stays
//     removed; one added since stays, with its tokens; the audit log loses
//     nothing;
//   - revoked token ids are the union of both;
//   - a user account of the backup keeps the later of its two token floors
//     (password_reset_at), and one deleted since the backup comes back with
//     the restore's time as its floor: every token it had is refused;
//     deleted accounts' floors are the union of both, the later one kept;
//   - the second factors, one-time codes, MFA tickets and wrong-code counts
//     of the accounts that exist now are the current ones (a TOTP turned
//     off or recovery codes regenerated since the backup stay so); those of
//     accounts deleted since are the backup's; lockouts are the current
//     ones.

// controlPlaneTables are taken whole from the current database.
var controlPlaneTables = []string{"_svc_admins", "_svc_admin_sessions", "_svc_api_tokens", "_svc_audit", "_svc_lockouts"}

func (au *Auth) registerRestoreCarrier() {
	au.core.OnRestore(engine.RestoreCarrier{Name: "auth", Carry: au.carryRestore})
}

func (au *Auth) carryRestore(tx *fsm.Tx, rc engine.RestoreContext) error {
	for _, t := range controlPlaneTables {
		if err := engine.CarryTable(tx, t, ""); err != nil {
			return err
		}
	}
	if err := engine.UnionTable(tx, "_svc_revoked"); err != nil {
		return err
	}
	if err := carryDeletedFloors(tx); err != nil {
		return err
	}
	if _, err := tx.ExecDirect(`CREATE TEMP TABLE restore_accounts (coll TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (coll, id)) WITHOUT ROWID`); err != nil {
		return err
	}
	defer tx.ExecDirect(`DROP TABLE IF EXISTS temp.restore_accounts`)
	if err := carryAccountFloors(tx, rc.Now); err != nil {
		return err
	}
	for _, t := range accountTables {
		if err := engine.CarryTable(tx, t.name, `(coll, user_id) IN (SELECT coll, id FROM temp.restore_accounts)`); err != nil {
			return err
		}
	}
	return nil
}

// carryDeletedFloors merges the deleted accounts' token floors.
func carryDeletedFloors(tx *fsm.Tx) error {
	for _, schema := range []string{"main", "prev"} {
		if ok, err := engine.TableExists(tx, schema, "_svc_deleted_accounts"); err != nil || !ok {
			return err
		}
	}
	_, err := tx.ExecDirect(`INSERT INTO main._svc_deleted_accounts (coll, id, floor)
		SELECT coll, id, floor FROM prev._svc_deleted_accounts WHERE true
		ON CONFLICT (coll, id) DO UPDATE SET floor = max(floor, excluded.floor)`)
	return err
}

// carryAccountFloors raises the token floor of every account of the
// restored auth collections: to the current one for an account that
// exists now (recorded in temp.restore_accounts), to now for one that
// does not.
func carryAccountFloors(tx *fsm.Tx, now int64) error {
	type coll struct{ id, name, prev string }
	rows, err := tx.QueryDirect(`SELECT id, name FROM main._svc_collections WHERE type = 'auth' ORDER BY id`)
	if err != nil {
		return err
	}
	var colls []coll
	for rows.Next() {
		var c coll
		if err := rows.Scan(&c.id, &c.name); err != nil {
			rows.Close()
			return err
		}
		colls = append(colls, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range colls {
		err := tx.QueryRow(`SELECT name FROM prev._svc_collections WHERE id = ? AND type = 'auth'`, colls[i].id).Scan(&colls[i].prev)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if colls[i].prev != "" {
			if ok, err := engine.TableExists(tx, "prev", colls[i].prev); err != nil {
				return err
			} else if !ok {
				colls[i].prev = ""
			}
		}
	}
	for _, c := range colls {
		t := `main.` + quote(c.name)
		if c.prev == "" {
			if _, err := tx.ExecDirect(`UPDATE `+t+` SET password_reset_at = max(COALESCE(password_reset_at, 0), ?)`, now); err != nil {
				return err
			}
			continue
		}
		p := `prev.` + quote(c.prev)
		if _, err := tx.ExecDirect(`INSERT INTO temp.restore_accounts (coll, id) SELECT ?, id FROM `+p, c.id); err != nil {
			return err
		}
		if _, err := tx.ExecDirect(`UPDATE ` + t + ` SET password_reset_at = p.password_reset_at FROM ` + p + ` AS p
			WHERE p.id = ` + t + `.id AND COALESCE(p.password_reset_at, 0) > COALESCE(` + t + `.password_reset_at, 0)`); err != nil {
			return err
		}
		if _, err := tx.ExecDirect(`UPDATE `+t+` SET password_reset_at = max(COALESCE(password_reset_at, 0), ?)
			WHERE id NOT IN (SELECT id FROM temp.restore_accounts WHERE coll = ?)`, now, c.id); err != nil {
			return err
		}
	}
	return nil
}

// quote quotes an SQL identifier.
func quote(s string) string {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}
