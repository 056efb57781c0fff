package migrations

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
)

// Mode says what an apply may do.
type Mode string

// The apply modes.
const (
	// Additive only creates and extends: new collections, new fields,
	// new indexes.
	Additive Mode = "additive"
	// Sync makes the schema equal to the snapshot: it also changes
	// fields, rules and options, and drops what the snapshot lacks.
	Sync Mode = "sync"
)

// ParseMode checks a mode's name ("" is additive).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Additive:
		return Additive, nil
	case Sync:
		return Sync, nil
	}
	return "", engine.FieldError("mode", "must be additive or sync")
}

// Decode reads a snapshot: strict JSON (unknown members refused), a
// format version this node knows, named collections each once. What the
// definitions themselves hold is checked when a plan is made of them.
func Decode(b []byte) (*Snapshot, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Snapshot
	if err := dec.Decode(&s); err != nil {
		return nil, engine.FieldError("snapshot", "invalid snapshot: "+err.Error())
	}
	if dec.More() {
		return nil, engine.FieldError("snapshot", "invalid snapshot: trailing data")
	}
	return &s, s.check()
}

// check validates what Decode promises.
func (s *Snapshot) check() error {
	d := map[string]string{}
	switch {
	case s.Version <= 0:
		d["snapshot.version"] = "is required (the snapshot format's version, a positive number)"
	case s.Version > FormatVersion:
		d["snapshot.version"] = fmt.Sprintf("snapshot format %d is newer than this node's (%d): upgrade this node first", s.Version, FormatVersion)
	}
	if s.Collections == nil {
		d["snapshot.collections"] = "is required"
	}
	seen := map[string]bool{}
	for i, c := range s.Collections {
		key := fmt.Sprintf("snapshot.collections.%d", i)
		lower := strings.ToLower(c.Name)
		switch {
		case c.Name == "":
			d[key+".name"] = "cannot be blank"
		case seen[lower]:
			d[key+".name"] = "appears twice"
		case moduleOwned(c.Name):
			d[key+".name"] = "svc_ collections belong to the node's modules and are not part of a snapshot"
		}
		seen[lower] = true
		switch c.Type {
		case schema.TypeBase, schema.TypeAuth, schema.TypeView:
		default:
			d[key+".type"] = "must be base, auth or view"
		}
		for j, f := range c.Fields {
			if f.Name == "" {
				d[fmt.Sprintf("%s.fields.%d.name", key, j)] = "cannot be blank"
			}
		}
		ixSeen := map[Index]bool{}
		for j, ix := range c.Indexes {
			switch {
			case ix.Field == "":
				d[fmt.Sprintf("%s.indexes.%d.field", key, j)] = "cannot be blank"
			case c.Type == schema.TypeView:
				d[fmt.Sprintf("%s.indexes.%d", key, j)] = "view collections cannot be indexed"
			case ixSeen[ix]:
				d[fmt.Sprintf("%s.indexes.%d", key, j)] = "appears twice"
			}
			ixSeen[ix] = true
		}
	}
	if len(d) > 0 {
		return engine.ValidationError(d)
	}
	return nil
}
