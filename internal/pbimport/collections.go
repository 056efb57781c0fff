package pbimport

import (
	"encoding/json"
	"fmt"
)

// Collection is a row of PocketBase's _collections table (0.23+ shape).
type Collection struct {
	ID         string
	Name       string
	Type       string // base, auth or view
	System     bool
	Fields     []Field
	Indexes    []string // CREATE INDEX statements
	ListRule   *string  // nil: superusers only
	ViewRule   *string
	CreateRule *string
	UpdateRule *string
	DeleteRule *string
	// Options holds the type's options: an auth collection's authRule,
	// manageRule, password auth and token settings, a view's viewQuery.
	Options map[string]any
	// Raw is the row as PocketBase's API would answer it (for a report).
	Raw map[string]any
}

// Field is one of a collection's fields: its common keys, and every key
// (the type's options are flattened beside them, as PocketBase stores
// them) in Options.
type Field struct {
	ID       string
	Name     string
	Type     string
	System   bool
	Hidden   bool
	Required bool
	Options  map[string]any
}

// MaxSelect is a select, relation or file field's maxSelect (1 when unset).
func (f Field) MaxSelect() int {
	if v, ok := f.Options["maxSelect"].(float64); ok && v > 1 {
		return int(v)
	}
	return 1
}

// Multiple reports whether the field stores a JSON array of values.
func (f Field) Multiple() bool {
	switch f.Type {
	case "select", "relation", "file":
		return f.MaxSelect() > 1
	}
	return false
}

// Field returns the field named name.
func (c *Collection) Field(name string) (Field, bool) {
	for _, f := range c.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// ViewQuery is a view collection's query.
func (c *Collection) ViewQuery() string {
	q, _ := c.Options["viewQuery"].(string)
	return q
}

// Collections reads every collection, system ones included, in the order
// PocketBase created them.
func (s *Source) Collections() ([]*Collection, error) {
	rows, err := s.db.Query(`SELECT id, system, type, name, fields, indexes, listRule, viewRule,
		createRule, updateRule, deleteRule, options FROM _collections ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Collection
	for rows.Next() {
		var c Collection
		var fields, indexes, options string
		if err := rows.Scan(&c.ID, &c.System, &c.Type, &c.Name, &fields, &indexes, &c.ListRule, &c.ViewRule,
			&c.CreateRule, &c.UpdateRule, &c.DeleteRule, &options); err != nil {
			return nil, err
		}
		var raw []map[string]any
		if err := json.Unmarshal([]byte(fields), &raw); err != nil {
			return nil, fmt.Errorf("collection %s: fields: %w", c.Name, err)
		}
		for _, m := range raw {
			f := Field{Options: m}
			f.ID, _ = m["id"].(string)
			f.Name, _ = m["name"].(string)
			f.Type, _ = m["type"].(string)
			f.System, _ = m["system"].(bool)
			f.Hidden, _ = m["hidden"].(bool)
			f.Required, _ = m["required"].(bool)
			c.Fields = append(c.Fields, f)
		}
		if indexes != "" {
			if err := json.Unmarshal([]byte(indexes), &c.Indexes); err != nil {
				return nil, fmt.Errorf("collection %s: indexes: %w", c.Name, err)
			}
		}
		if options != "" {
			if err := json.Unmarshal([]byte(options), &c.Options); err != nil {
				return nil, fmt.Errorf("collection %s: options: %w", c.Name, err)
			}
		}
		c.Raw = map[string]any{"id": c.ID, "name": c.Name, "type": c.Type, "system": c.System, "fields": raw,
			"indexes": c.Indexes, "listRule": c.ListRule, "viewRule": c.ViewRule, "createRule": c.CreateRule,
			"updateRule": c.UpdateRule, "deleteRule": c.DeleteRule}
		for k, v := range c.Options {
			c.Raw[k] = v
		}
		out = append(out, &c)
	}
	return out, rows.Err()
}
