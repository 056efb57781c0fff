package sqlconsole

import (
	"context"
	"database/sql"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Table is one table or view of the schema introspection.
type Table struct {
	Name        string       `json:"name"`
	Type        string       `json:"type"` // table or view
	Columns     []Column     `json:"columns"`
	Indexes     []Index      `json:"indexes"`
	ForeignKeys []ForeignKey `json:"foreignKeys"`
	// RowCount is nil for a view (counting would run its query).
	RowCount *int64 `json:"rowCount"`
}

// Column is a column of a table.
type Column struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	NotNull    bool    `json:"notNull"`
	Default    *string `json:"default"`
	PrimaryKey bool    `json:"primaryKey"`
	// Secret columns read as NULL in the console.
	Secret bool `json:"secret,omitempty"`
}

// Index is an index of a table.
type Index struct {
	Name    string   `json:"name"`
	Unique  bool     `json:"unique"`
	Columns []string `json:"columns"`
}

// ForeignKey is a foreign key of a table.
type ForeignKey struct {
	From  string `json:"from"`
	Table string `json:"table"`
	To    string `json:"to"`
}

// Schema describes the tables and views the console can read on this
// node's replica, in one consistent state: the service's internal tables
// are left out.
func (c *Console) Schema(ctx context.Context, p engine.Principal) ([]Table, error) {
	if !p.IsAdmin() {
		return nil, errNotAdmin
	}
	secrets := secretColumns(c.core)
	out := []Table{}
	err := c.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		rows, err := r.QueryDirect(`SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view')
			AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name NOT LIKE '\_svc\_%' ESCAPE '\' ORDER BY name`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t Table
			if err := rows.Scan(&t.Name, &t.Type); err != nil {
				rows.Close()
				return err
			}
			out = append(out, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range out {
			if err := describe(r, &out[i], secrets[strings.ToLower(out[i].Name)]); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// describe fills t's columns, indexes, foreign keys and row count.
func describe(r *fsm.Reader, t *Table, secret map[string]bool) error {
	t.Columns, t.Indexes, t.ForeignKeys = []Column{}, []Index{}, []ForeignKey{}
	err := each(r, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, []any{t.Name}, func(s func(...any) error) error {
		var col Column
		var def sql.NullString
		var pk int
		if err := s(&col.Name, &col.Type, &col.NotNull, &def, &pk); err != nil {
			return err
		}
		if def.Valid {
			col.Default = &def.String
		}
		col.PrimaryKey, col.Secret = pk > 0, secret[strings.ToLower(col.Name)]
		t.Columns = append(t.Columns, col)
		return nil
	})
	if err != nil || t.Type != "table" {
		return err
	}
	err = each(r, `SELECT name, "unique" FROM pragma_index_list(?) ORDER BY name`, []any{t.Name}, func(s func(...any) error) error {
		var ix Index
		if err := s(&ix.Name, &ix.Unique); err != nil {
			return err
		}
		t.Indexes = append(t.Indexes, ix)
		return nil
	})
	if err != nil {
		return err
	}
	for i := range t.Indexes {
		ix := &t.Indexes[i]
		ix.Columns = []string{}
		err := each(r, `SELECT coalesce(name, '') FROM pragma_index_info(?) ORDER BY seqno`, []any{ix.Name}, func(s func(...any) error) error {
			var n string
			if err := s(&n); err != nil {
				return err
			}
			ix.Columns = append(ix.Columns, n)
			return nil
		})
		if err != nil {
			return err
		}
	}
	err = each(r, `SELECT "from", "table", coalesce("to", '') FROM pragma_foreign_key_list(?) ORDER BY id, seq`, []any{t.Name}, func(s func(...any) error) error {
		var fk ForeignKey
		if err := s(&fk.From, &fk.Table, &fk.To); err != nil {
			return err
		}
		t.ForeignKeys = append(t.ForeignKeys, fk)
		return nil
	})
	if err != nil {
		return err
	}
	var n int64
	if err := r.QueryRow(`SELECT count(*) FROM "` + strings.ReplaceAll(t.Name, `"`, `""`) + `"`).Scan(&n); err != nil {
		return err
	}
	t.RowCount = &n
	return nil
}

// each runs query and calls fn with the scanner of every row.
func each(r *fsm.Reader, query string, args []any, fn func(scan func(...any) error) error) error {
	rows, err := r.QueryDirect(query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
