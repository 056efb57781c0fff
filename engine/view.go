package engine

import (
	"context"
	"fmt"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

// inferView validates a view query on this replica and derives the view's
// fields from the columns it yields. The query must be one SELECT (it is
// wrapped as a subquery, so anything else is a syntax error), must yield an
// id column, and may not read internal tables.
func (e *Engine) inferView(ctx context.Context, query string) ([]*schema.Field, []string, *Error) {
	q := strings.TrimSpace(query)
	q = strings.TrimSuffix(q, ";")
	lower := strings.ToLower(q)
	if strings.Contains(lower, "_svc_") || strings.Contains(lower, "sqlite_") {
		return nil, nil, fieldError("view_query", "may not read internal tables")
	}
	var cols []string
	var decl []string
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		rows, err := r.QueryDirect("SELECT * FROM (" + q + ") LIMIT 0")
		if err != nil {
			return err
		}
		defer rows.Close()
		if cols, err = rows.Columns(); err != nil {
			return err
		}
		types, err := rows.ColumnTypes()
		if err != nil {
			return err
		}
		for _, t := range types {
			decl = append(decl, strings.ToUpper(t.DatabaseTypeName()))
		}
		return nil
	})
	if err != nil {
		return nil, nil, fieldError("view_query", "invalid query: "+err.Error())
	}
	if !hasName(cols, "id") {
		return nil, nil, fieldError("view_query", "must return an id column")
	}
	seen := map[string]bool{}
	var fields []*schema.Field
	for i, c := range cols {
		l := strings.ToLower(c)
		if seen[l] {
			return nil, nil, fieldError("view_query", fmt.Sprintf("column %q appears twice", c))
		}
		seen[l] = true
		if l == "id" || l == "created" || l == "updated" {
			continue
		}
		f := &schema.Field{ID: "fld_view_" + l, Name: c, Type: viewFieldType(decl[i])}
		if msg := schema.ValidateField(f, nil); msg != "" {
			return nil, nil, fieldError("view_query", fmt.Sprintf("column %q: %s (use an alias)", c, msg))
		}
		fields = append(fields, f)
	}
	return fields, cols, nil
}

func viewFieldType(decl string) string {
	switch decl {
	case "INTEGER", "REAL", "NUMERIC", "INT", "FLOAT", "DOUBLE":
		return schema.FieldNumber
	case "TEXT":
		return schema.FieldText
	}
	return schema.FieldJSON
}
