package engine

import (
	"strings"

	"svcd/fsm"
)

// CarryShared makes the rows of table name that both databases hold (by
// the key columns, e.g. "id" or "job_id, key") the current database's,
// and with each of them its rows in the child tables (each child names
// the same key columns, pointing at the parent's). Rows only the backup
// holds stay the backup's; rows only the current database holds are not
// brought back. It is what a module calls for the records of side effects
// it performs (webhook deliveries, queue jobs, workflow runs): a delivery
// sent, a job finished or a run advanced since the backup keeps that
// state, so the restore performs none of them a second time. A table
// missing on either side is left alone.
func CarryShared(tx *fsm.Tx, name, keys string, children ...ChildRows) error {
	for _, schema := range []string{"main", "prev"} {
		if ok, err := TableExists(tx, schema, name); err != nil || !ok {
			return err
		}
	}
	t := quoteIdent(name)
	tmp := "restore_shared_" + strings.TrimPrefix(name, "_")
	if _, err := tx.ExecDirect(`CREATE TEMP TABLE ` + quoteIdent(tmp) + ` AS SELECT ` + keys + ` FROM main.` + t +
		` INTERSECT SELECT ` + keys + ` FROM prev.` + t); err != nil {
		return err
	}
	defer tx.ExecDirect(`DROP TABLE IF EXISTS temp.` + quoteIdent(tmp))
	in := func(cols string) string {
		return `(` + cols + `) IN (SELECT ` + keys + ` FROM temp.` + quoteIdent(tmp) + `)`
	}
	for _, c := range children {
		if err := CarryTable(tx, c.Table, in(c.Keys)); err != nil {
			return err
		}
	}
	return CarryTable(tx, name, in(keys))
}

// ChildRows are the rows of Table that belong to a parent row of
// CarryShared: Keys are Table's columns holding the parent's key, in the
// parent's key order.
type ChildRows struct {
	Table, Keys string
}
