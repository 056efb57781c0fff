package engine

import (
	"context"
	"fmt"
	"strings"

	"svcd/engine/schema"
)

// inferView validates a view query on this replica and derives the view's
// fields from the columns it yields. The query must be one SELECT (it is
// wrapped as a subquery, so anything else is a syntax error), must yield an
// id column, and may not read internal tables.
func (sc *Schema) inferView(ctx context.Context, query string) ([]*schema.Field, []string, *Error) {
	q := strings.TrimSuffix(strings.TrimSpace(query), ";")
	set := sc.e.schema.Load()
	deny := func(table, column string) bool { return privateColumn(set, table, column) }
	probed, err := sc.e.store.ProbeSelect(ctx, q, deny)
	if err != nil {
		return nil, nil, FieldError("view_query", "invalid query: "+err.Error())
	}
	cols := make([]string, len(probed))
	for i, c := range probed {
		cols[i] = c.Name
	}
	if !hasName(cols, "id") {
		return nil, nil, FieldError("view_query", "must return an id column")
	}
	seen := map[string]bool{}
	fields := []*schema.Field{}
	for _, c := range probed {
		l := strings.ToLower(c.Name)
		if seen[l] {
			return nil, nil, FieldError("view_query", fmt.Sprintf("column %q appears twice; give it an alias", c.Name))
		}
		seen[l] = true
		if l == "id" || l == "created" || l == "updated" {
			continue
		}
		f := &schema.Field{ID: "fld_view_" + l, Name: c.Name, Type: viewFieldType(strings.ToUpper(c.DeclType))}
		if msg := schema.ValidateField(f, nil); msg != "" {
			return nil, nil, FieldError("view_query", fmt.Sprintf("column %q: %s (use an alias)", c.Name, msg))
		}
		fields = append(fields, f)
	}
	return fields, cols, nil
}

// privateColumn reports whether a view may not read table.column: internal
// tables, SQLite's own, and any column that is never emitted (password
// fields, auth-private columns).
func privateColumn(set *schemaSet, table, column string) bool {
	lt := strings.ToLower(table)
	if strings.HasPrefix(lt, "_svc") || strings.HasPrefix(lt, "sqlite_") || strings.HasPrefix(lt, "pragma_") {
		return true
	}
	ci := set.byName[lt]
	if ci == nil {
		return false
	}
	for _, f := range ci.fields {
		if strings.EqualFold(f.Name, column) {
			return f.private
		}
	}
	return false
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
