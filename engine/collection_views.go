package engine

import (
	"strings"

	"svcd/fsm"
)

// viewCollections lists the view collections as the transaction sees them.
func viewCollections(tx *fsm.Tx) ([]*collInfo, error) {
	rows, err := tx.Query(`SELECT version, data FROM _svc_collections WHERE type = 'view' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*collInfo
	for rows.Next() {
		var ver int64
		var data string
		if err := rows.Scan(&ver, &data); err != nil {
			return nil, err
		}
		ci, err := parseCollInfo(data, ver)
		if err != nil {
			return nil, err
		}
		out = append(out, ci)
	}
	return out, rows.Err()
}

// brokenViews returns the view collections whose query no longer runs
// (after a table was dropped inside the transaction).
func brokenViews(tx *fsm.Tx) ([]string, error) {
	views, err := viewCollections(tx)
	if err != nil {
		return nil, err
	}
	var broken []string
	for _, v := range views {
		rows, err := tx.QueryDirect("SELECT * FROM " + v.table + " LIMIT 0")
		if err != nil {
			broken = append(broken, v.Name)
			continue
		}
		rows.Close()
	}
	return broken, nil
}

// refreshViewQueries stores, for every view collection, the query text
// SQLite keeps for it: renaming a table or column rewrites the views that
// read it, and the stored view_query must follow or the next save of the
// view would fail.
func refreshViewQueries(tx *fsm.Tx) error {
	views, err := viewCollections(tx)
	if err != nil {
		return err
	}
	for _, v := range views {
		var sqlText string
		if err := tx.QueryRow(`SELECT sql FROM sqlite_schema WHERE type = 'view' AND name = ?`, v.Name).Scan(&sqlText); err != nil {
			continue
		}
		prefix := "CREATE VIEW " + v.table + " AS "
		if !strings.HasPrefix(sqlText, prefix) {
			continue
		}
		q := sqlText[len(prefix):]
		if q == strings.TrimSuffix(strings.TrimSpace(v.ViewQuery), ";") {
			continue
		}
		c := *v.Collection
		c.ViewQuery = q
		next, err := newCollInfo(&c, v.viewCols)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE _svc_collections SET version = version + 1, data = ? WHERE id = ?`, next.stored(), v.ID); err != nil {
			return err
		}
		tx.Emit(fsm.Event{Kind: evSchema, Subject: v.ID})
	}
	return nil
}
