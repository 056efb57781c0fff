package pbimport

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// Record is a row of a collection's table, each value converted by its
// field's type: text-like values (text, email, url, editor, date,
// autodate, password hash, a single select, relation or file) as string,
// number as float64, bool as bool, json and geoPoint decoded, a multiple
// select, relation or file as []string. A column no field names is left
// out.
type Record map[string]any

// ID is the record's id.
func (r Record) ID() string { s, _ := r["id"].(string); return s }

// Records calls fn for each row of c's table (or view) in rowid order
// (a view's in its own order), stopping at fn's first error.
func (s *Source) Records(c *Collection, fn func(Record) error) error {
	cols := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		cols[i] = quoteIdent(f.Name)
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(c.Name)
	if c.Type != "view" {
		q += " ORDER BY rowid"
	}
	rows, err := s.db.Query(q)
	if err != nil {
		return fmt.Errorf("collection %s: %w", c.Name, err)
	}
	defer rows.Close()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		rec := Record{}
		for i, f := range c.Fields {
			v, err := convert(f, vals[i])
			if err != nil {
				return fmt.Errorf("collection %s: field %s: %w", c.Name, f.Name, err)
			}
			rec[f.Name] = v
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return rows.Err()
}

func convert(f Field, b sql.RawBytes) (any, error) {
	s := string(b)
	switch {
	case f.Type == "bool":
		return s == "1" || s == "true", nil
	case f.Type == "number":
		if s == "" {
			return float64(0), nil
		}
		var n float64
		if err := json.Unmarshal(b, &n); err != nil {
			return nil, fmt.Errorf("number %q: %w", s, err)
		}
		return n, nil
	case f.Type == "json" || f.Type == "geoPoint":
		if s == "" {
			return nil, nil
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("json %q: %w", s, err)
		}
		return v, nil
	case f.Multiple():
		out := []string{}
		if s == "" {
			return out, nil
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("list %q: %w", s, err)
		}
		return out, nil
	}
	return s, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
