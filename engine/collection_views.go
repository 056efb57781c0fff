package engine

import (
	"slices"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

// viewCollections lists the view collections as the transaction sees them.
func viewCollections(tx *fsm.Tx) ([]*Coll, error) {
	rows, err := tx.Query(`SELECT version, data FROM _svc_collections WHERE type = 'view' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Coll
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
		cols, err := viewColumnNames(tx, v.table)
		if err != nil {
			return err
		}
		if q == strings.TrimSuffix(strings.TrimSpace(v.ViewQuery), ";") && slices.Equal(cols, v.viewCols) {
			continue
		}
		c := *v.Collection
		c.ViewQuery = q
		c.Fields = refreshedViewFields(v, cols)
		next, err := newCollInfo(&c, cols)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE _svc_collections SET version = version + 1, data = ? WHERE id = ?`, next.stored(), v.ID); err != nil {
			return err
		}
		tx.Emit(fsm.Event{Kind: EvSchema, Subject: v.ID})
	}
	return nil
}

// viewColumnNames lists the columns a view yields now.
func viewColumnNames(tx *fsm.Tx, table string) ([]string, error) {
	rows, err := tx.QueryDirect("SELECT * FROM " + table + " LIMIT 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return append([]string(nil), rows.Columns()...), nil
}

// refreshedViewFields keeps the fields of a view whose column survived a
// rename (by position: SQLite rewrites the column in place) and types any
// other column as json, the type that renders whatever it holds.
func refreshedViewFields(v *Coll, cols []string) []*schema.Field {
	old := map[int]*schema.Field{}
	i := 0
	for _, name := range v.viewCols {
		l := strings.ToLower(name)
		if l == "id" || l == "created" || l == "updated" {
			continue
		}
		if i < len(v.Fields) {
			old[len(old)] = v.Fields[i]
		}
		i++
	}
	fields := []*schema.Field{}
	n := 0
	for _, name := range cols {
		l := strings.ToLower(name)
		if l == "id" || l == "created" || l == "updated" {
			continue
		}
		f := &schema.Field{ID: "fld_view_" + l, Name: name, Type: schema.FieldJSON}
		if o, ok := old[n]; ok {
			f.Type = o.Type
			f.Options = o.Options
		}
		fields = append(fields, f)
		n++
	}
	return fields
}
