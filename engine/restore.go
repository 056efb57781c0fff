package engine

import (
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"svcd/fsm"
)

// A restore (engine/backup) installs a whole database file in place of the
// replica's, at one log index on every node (fsm/replace.go). The file is
// older than the state it replaces: some of that state must outlive it.
// Before the new database is swapped in, with the current one attached
// as schema "prev", the core brings it to the current internal schema
// version and every module's restore carrier copies across what must not
// go back in time: revocations, sign-out floors, the control plane's
// accounts and audit log (engine/auth), spent one-time tokens
// (engine/files), the state of side effects performed since the backup
// (webhook deliveries, queue jobs and runs, workflow runs:
// restore_shared.go). Everything else is the backup's.

// RestoreContext is what a restore carrier knows of the restore.
type RestoreContext struct {
	// Now is the restore's time (unix seconds), resolved before it was
	// proposed: a floor for tokens that must not outlive it.
	Now int64
}

// RestoreCarrier carries state of the current database (schema "prev")
// into the restored one (schema "main"), inside the restore's
// transaction. Carry must be deterministic, as a handler is; tables of
// either side may be missing (a backup of an older version), which
// TableExists tells.
type RestoreCarrier struct {
	Name  string
	Carry func(tx *fsm.Tx, rc RestoreContext) error
}

// OnRestore registers a restore carrier; carriers run in registration
// order.
func (e *Engine) OnRestore(c RestoreCarrier) {
	e.reg.mustOpen("restore carrier " + c.Name)
	e.reg.restoreCarriers = append(e.reg.restoreCarriers, c)
}

// ReplaceCommand registers the handler of a command that replaces the
// whole database (fsm.Registry.RegisterReplace). Its result, like a
// handler's, must be nil or a registered result type.
func (e *Engine) ReplaceCommand(t fsm.Type, name string, h fsm.ReplaceHandler) {
	e.reg.mustOpen("command " + name)
	e.reg.fsm.RegisterReplace(t, name, func(cmd fsm.Command, index uint64) (fsm.Replacement, error) {
		rep, err := h(cmd, index)
		if err == nil && rep.Result != nil && e.reg.results.byType[reflect.TypeOf(rep.Result)] == nil {
			return fsm.Replacement{}, fmt.Errorf("engine: command %s returned %T, which is not a registered result (RegisterResult)", name, rep.Result)
		}
		return rep, err
	})
}

// PrepareRestored readies a restored database inside the restore's
// transaction: it runs the internal migrations between its version and
// the current database's (with the current ETag key, so tags keep their
// meaning), then every restore carrier.
func (e *Engine) PrepareRestored(tx *fsm.Tx, rc RestoreContext) error {
	var cur int64
	err := tx.QueryRow(`SELECT v FROM prev._svc_meta WHERE k = 'schema_version'`).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("current schema version: %w", err)
	}
	if cur > e.SchemaVersion() {
		return fmt.Errorf("%w: internal schema version %d is newer than this binary's %d: upgrade svcd", fsm.ErrHalt, cur, e.SchemaVersion())
	}
	var key []byte
	if ok, err := TableExists(tx, "prev", "_svc_keys"); err != nil {
		return err
	} else if ok {
		err := tx.QueryRow(`SELECT key FROM prev._svc_keys WHERE name = ?`, etagKeyName).Scan(&key)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	if _, err := e.migrateTx(tx, cur, key); err != nil {
		return fmt.Errorf("migrate the restored database: %w", err)
	}
	for _, c := range e.reg.restoreCarriers {
		if err := c.Carry(tx, rc); err != nil {
			return fmt.Errorf("restore: carry %s: %w", c.Name, err)
		}
	}
	return nil
}

// TableExists reports whether schema ("main" or "prev") has table name.
func TableExists(tx *fsm.Tx, schema, name string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM `+quoteIdent(schema)+`.sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// TableColumns lists the columns of table name in schema, in order.
func TableColumns(tx *fsm.Tx, schema, name string) ([]string, error) {
	rows, err := tx.QueryDirect(`SELECT name FROM pragma_table_info(?, ?) ORDER BY cid`, name, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// CarryTable makes table name of the restored database the current
// database's: its rows are replaced by prev's (where filter, a SQL
// condition on prev's rows, or "" for all of them: rows of the restored
// table matching the same condition are replaced, the others kept), on
// the columns both have. A table missing on either side is left alone.
func CarryTable(tx *fsm.Tx, name, filter string) error {
	cols, err := commonColumns(tx, name)
	if err != nil || cols == "" {
		return err
	}
	where := ""
	if filter != "" {
		where = " WHERE " + filter
	}
	t := quoteIdent(name)
	if _, err := tx.ExecDirect(`DELETE FROM main.` + t + where); err != nil {
		return err
	}
	_, err = tx.ExecDirect(`INSERT INTO main.` + t + ` (` + cols + `) SELECT ` + cols + ` FROM prev.` + t + where)
	return err
}

// UnionTable adds to table name of the restored database the rows of the
// current one it lacks (by its primary key or unique constraints), on the
// columns both have.
func UnionTable(tx *fsm.Tx, name string) error {
	cols, err := commonColumns(tx, name)
	if err != nil || cols == "" {
		return err
	}
	t := quoteIdent(name)
	_, err = tx.ExecDirect(`INSERT OR IGNORE INTO main.` + t + ` (` + cols + `) SELECT ` + cols + ` FROM prev.` + t)
	return err
}

// commonColumns is the quoted list of the columns table name has in both
// schemas ("" when either lacks the table).
func commonColumns(tx *fsm.Tx, name string) (string, error) {
	for _, schema := range []string{"main", "prev"} {
		if ok, err := TableExists(tx, schema, name); err != nil || !ok {
			return "", err
		}
	}
	mains, err := TableColumns(tx, "main", name)
	if err != nil {
		return "", err
	}
	prevs, err := TableColumns(tx, "prev", name)
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, c := range prevs {
		have[c] = true
	}
	var cols []string
	for _, c := range mains {
		if have[c] {
			cols = append(cols, quoteIdent(c))
		}
	}
	return strings.Join(cols, ", "), nil
}
