package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"svcd/engine/crypt"
	"svcd/engine/filter"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Coll is a collection with everything the hot paths need precomputed.
type Coll struct {
	*schema.Collection
	parsed map[string]parsedRule // the rules, parsed once (rules_parsed.go)
	table  string                // quoted table name
	fields []*FieldInfo          // stored fields in output order (auth system fields first)
	// Row layout of selectCols: id, created, updated, then fields.
	selectCols  string
	insertSQL   string // INSERT of id, created, updated and every field
	hasCreated  bool   // false only for views without the column
	hasUpdated  bool
	defaultSort string
	rulesUse    rulesUse // computed once: rule context kept per write
	viewCols    []string // view collections: the query's columns
	// keyring opens sealed values when records are rendered (set on the
	// engine's cache only; apply never opens anything).
	keyring *crypt.Keyring
	fc      atomic.Pointer[filter.Collection]
}

type FieldInfo struct {
	*schema.Field
	typ     schema.FieldType
	col     string // quoted column name
	system  bool   // an auth system field
	private bool   // never emitted (passwords, auth-private columns)
}

// schemaSet is an immutable view of all collections, swapped as a whole.
type schemaSet struct {
	byName map[string]*Coll // lower-cased name
	byID   map[string]*Coll
	list   []*Coll // by name
}

// Collection implements schema.Lookup.
func (s *schemaSet) Collection(nameOrID string) *schema.Collection {
	if ci := s.lookup(nameOrID); ci != nil {
		return ci.Collection
	}
	return nil
}

func (s *schemaSet) lookup(nameOrID string) *Coll {
	if ci, ok := s.byID[nameOrID]; ok {
		return ci
	}
	return s.byName[strings.ToLower(nameOrID)]
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// authSystemFields are the columns every auth collection has.
func authSystemFields() []*FieldInfo {
	mk := func(id, name, typ string, required, unique, private bool) *FieldInfo {
		f := &schema.Field{ID: id, Name: name, Type: typ, Required: required, Unique: unique}
		t, _ := schema.TypeOf(typ)
		return &FieldInfo{Field: f, typ: t, col: quoteIdent(name), system: true, private: private}
	}
	return []*FieldInfo{
		mk("sys_email", "email", schema.FieldEmail, true, true, false),
		mk("sys_password", "password", schema.FieldPassword, false, false, true),
		mk("sys_email_verified", "email_verified", schema.FieldBool, false, false, false),
		mk("sys_is_anonymous", "is_anonymous", schema.FieldBool, false, false, false),
		mk("sys_password_reset_at", "password_reset_at", schema.FieldDate, false, false, true),
	}
}

// isAuthSystemName reports whether name is taken by an auth system field.
func isAuthSystemName(name string) bool {
	for _, f := range authSystemFields() {
		if strings.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}

// newCollInfo precomputes the layout of c.
func newCollInfo(c *schema.Collection, viewCols []string) (*Coll, error) {
	ci := &Coll{Collection: c, table: quoteIdent(c.Name), hasCreated: true, hasUpdated: true}
	if c.Type == schema.TypeAuth {
		ci.fields = append(ci.fields, authSystemFields()...)
	}
	for _, f := range c.Fields {
		t, ok := schema.TypeOf(f.Type)
		if !ok {
			return nil, fmt.Errorf("collection %s: field %s has unknown type %q", c.Name, f.Name, f.Type)
		}
		ci.fields = append(ci.fields, &FieldInfo{Field: f, typ: t, col: quoteIdent(f.Name), private: f.Type == schema.FieldPassword})
	}
	created, updated := "created", "updated"
	if c.Type == schema.TypeView {
		ci.viewCols = viewCols
		ci.hasCreated, ci.hasUpdated = hasName(viewCols, "created"), hasName(viewCols, "updated")
		if !ci.hasCreated {
			created = "NULL"
		}
		if !ci.hasUpdated {
			updated = "NULL"
		}
	}
	cols := []string{"id", created, updated}
	for _, f := range ci.fields {
		cols = append(cols, f.col)
	}
	ci.selectCols = strings.Join(cols, ", ")
	if c.Type != schema.TypeView {
		ins := []string{"id", "created", "updated"}
		for _, f := range ci.fields {
			ins = append(ins, f.col)
		}
		ci.insertSQL = "INSERT INTO " + ci.table + " (" + strings.Join(ins, ", ") + ") VALUES (?" +
			strings.Repeat(", ?", len(ins)-1) + ")"
	}
	ci.rulesUse = rulesUseOf(c)
	ci.parsed = parseRules(ci)
	ci.defaultSort = "-created"
	if !ci.hasCreated {
		ci.defaultSort = "id"
	}
	return ci, nil
}

func hasName(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// stored is the JSON kept in _svc_collections for ci.
func (ci *Coll) stored() string {
	b, _ := json.Marshal(storedCollection{Collection: *ci.Collection, ViewColumns: ci.viewCols})
	return string(b)
}

func (e *Engine) reloadSchema(ctx context.Context) error {
	set := &schemaSet{byName: map[string]*Coll{}, byID: map[string]*Coll{}}
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT version, data FROM _svc_collections ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ver int64
			var data string
			if err := rows.Scan(&ver, &data); err != nil {
				return err
			}
			ci, err := parseCollInfo(data, ver)
			if err != nil {
				return err
			}
			ci.keyring = e.keyring
			set.byID[ci.ID] = ci
			set.byName[strings.ToLower(ci.Name)] = ci
			set.list = append(set.list, ci)
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("engine: load collections: %w", err)
	}
	e.schema.Store(set)
	return nil
}

// storedCollection is the form of a collection in _svc_collections: the
// API form plus what the engine derives and keeps beside it.
type storedCollection struct {
	schema.Collection
	// ViewColumns are the columns a view's query yields, recorded on save.
	ViewColumns []string `json:"_view_columns,omitempty"`
}

func parseCollInfo(data string, version int64) (*Coll, error) {
	var sc storedCollection
	if err := json.Unmarshal([]byte(data), &sc); err != nil {
		return nil, fmt.Errorf("decode collection: %w", err)
	}
	sc.Version = version
	ci, err := newCollInfo(&sc.Collection, sc.ViewColumns)
	return ci, err
}

// Coll finds a collection of the committed schema by name or id (nil
// when there is none).
func (e *Engine) Coll(nameOrID string) *Coll {
	return e.schema.Load().lookup(nameOrID)
}
