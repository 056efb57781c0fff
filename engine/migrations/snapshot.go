package migrations

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
)

// FormatVersion is the version of the snapshot format this binary writes.
// A node applies snapshots of its own format version and earlier ones
// (CONTRACT.md) and refuses newer ones with 422.
const FormatVersion = 1

// Snapshot is the schema of a node.
type Snapshot struct {
	// Version is the snapshot format's version (FormatVersion).
	Version int `json:"version"`
	// SchemaVersion is the internal schema version of the node that took
	// the snapshot (informative: internal tables are not in a snapshot).
	SchemaVersion int64        `json:"schema_version"`
	Collections   []Collection `json:"collections"`
}

// Collection is one collection of a snapshot, without id or timestamps.
type Collection struct {
	Name           string              `json:"name"`
	Type           string              `json:"type"`
	Fields         []Field             `json:"fields"`
	ViewRule       *string             `json:"view_rule"`
	CreateRule     *string             `json:"create_rule"`
	UpdateRule     *string             `json:"update_rule"`
	DeleteRule     *string             `json:"delete_rule"`
	HistoryEnabled bool                `json:"history_enabled"`
	ViewQuery      string              `json:"view_query,omitempty"`
	AuthOptions    *schema.AuthOptions `json:"auth_options,omitempty"`
	Indexes        []Index             `json:"indexes"`
}

// Field is a field with every option, without its id; a relation's
// collection is the target's name.
type Field struct{ schema.Field }

// MarshalJSON writes the field without its id, its members in the
// order of schema.Field.
func (f Field) MarshalJSON() ([]byte, error) {
	cp := f.Field
	cp.ID = ""
	b, err := json.Marshal(cp)
	if err != nil {
		return nil, err
	}
	if rest, ok := bytes.CutPrefix(b, []byte(`{"id":"",`)); ok {
		return append([]byte{'{'}, rest...), nil
	}
	return b, nil
}

// Index is a managed index (idx_<collection>_<field>, uniq_ when unique).
type Index struct {
	Field  string `json:"field"`
	Unique bool   `json:"unique"`
}

// name is the index's managed name in collection coll.
func (ix Index) name(coll string) string {
	if ix.Unique {
		return "uniq_" + coll + "_" + ix.Field
	}
	return "idx_" + coll + "_" + ix.Field
}

// Take returns the snapshot of the node's committed schema. indexes lists
// a collection's managed indexes.
func Take(colls []*schema.Collection, schemaVersion int64, indexes func(coll string) ([]engine.Index, error)) (*Snapshot, error) {
	names := map[string]string{}
	for _, c := range colls {
		names[c.ID] = c.Name
	}
	out := &Snapshot{Version: FormatVersion, SchemaVersion: schemaVersion, Collections: []Collection{}}
	for _, c := range colls {
		if moduleOwned(c.Name) {
			continue
		}
		sc := fromSchema(c, names)
		if c.Type != schema.TypeView {
			ixs, err := indexes(c.Name)
			if err != nil {
				return nil, fmt.Errorf("indexes of %s: %w", c.Name, err)
			}
			for _, ix := range ixs {
				sc.Indexes = append(sc.Indexes, Index{Field: ix.Field, Unique: ix.Unique})
			}
		}
		sortIndexes(sc.Indexes)
		out.Collections = append(out.Collections, sc)
	}
	slices.SortFunc(out.Collections, func(a, b Collection) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out, nil
}

// moduleOwned reports whether a collection is one a module creates for
// itself (svc_..., engine/notify's): each node's modules create them, so
// a snapshot neither carries them nor, in sync, drops them.
func moduleOwned(name string) bool { return strings.HasPrefix(strings.ToLower(name), "svc_") }

func sortIndexes(ixs []Index) {
	slices.SortFunc(ixs, func(a, b Index) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		switch {
		case a.Unique == b.Unique:
			return 0
		case a.Unique:
			return 1
		}
		return -1
	})
}

// fromSchema is c as a snapshot collection; names maps collection ids to
// names (relation targets).
func fromSchema(c *schema.Collection, names map[string]string) Collection {
	sc := Collection{
		Name: c.Name, Type: c.Type, Fields: []Field{},
		ViewRule: c.ViewRule, CreateRule: c.CreateRule, UpdateRule: c.UpdateRule, DeleteRule: c.DeleteRule,
		HistoryEnabled: c.HistoryEnabled, ViewQuery: c.ViewQuery, AuthOptions: c.AuthOptions,
		Indexes: []Index{},
	}
	for _, f := range c.Fields {
		cp := *f
		cp.ID = ""
		if cp.Type == schema.FieldRelation {
			if n, ok := names[cp.Collection]; ok {
				cp.Collection = n
			}
		}
		sc.Fields = append(sc.Fields, Field{cp})
	}
	return sc
}

// definition is the collection's JSON definition as the core's schema
// plan takes it (no indexes).
func (c Collection) definition() []byte {
	type def struct {
		Name           string              `json:"name"`
		Type           string              `json:"type"`
		Fields         []Field             `json:"fields"`
		ViewRule       *string             `json:"view_rule"`
		CreateRule     *string             `json:"create_rule"`
		UpdateRule     *string             `json:"update_rule"`
		DeleteRule     *string             `json:"delete_rule"`
		HistoryEnabled bool                `json:"history_enabled"`
		ViewQuery      string              `json:"view_query"`
		AuthOptions    *schema.AuthOptions `json:"auth_options,omitempty"`
	}
	b, _ := json.Marshal(def{c.Name, c.Type, c.Fields, c.ViewRule, c.CreateRule, c.UpdateRule, c.DeleteRule, c.HistoryEnabled, c.ViewQuery, c.AuthOptions})
	return b
}
