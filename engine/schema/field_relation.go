package schema

import (
	"fmt"
	"regexp"
)

var _ FieldType = relationType{}

// recordID is the shape of a record id.
var recordID = regexp.MustCompile(`^[a-z0-9]{15}$`)

// relationType refers to records of another collection by id. The
// collection option accepts a name or an id and is stored as the id. Single:
// one id stored as TEXT ("" means null). Multiple: an array of ids (a single
// id is a one-element array), duplicates dropped, stored as a compact JSON
// array; output is always an array ([] for null). Whether the ids exist is
// checked by the engine, not here.
type relationType struct{}

func (relationType) Name() string { return FieldRelation }

func (relationType) Column(*Field) Column { return ColText }

func (relationType) OptionKeys() []string {
	return []string{"collection", "multiple", "max_select", "cascade", "restrict"}
}

func (relationType) CleanOptions(f *Field, lookup Lookup) string {
	o := f.Options
	f.Options = Options{
		Collection: o.Collection,
		Cascade:    o.Cascade,
		Restrict:   o.Restrict,
		Multiple:   o.Multiple,
		MaxSelect:  o.MaxSelect,
	}
	if o.Collection == "" {
		return "collection is required"
	}
	if lookup == nil {
		return fmt.Sprintf("collection %q cannot be resolved", o.Collection)
	}
	target := lookup.Collection(o.Collection)
	if target == nil {
		return fmt.Sprintf("collection %q does not exist", o.Collection)
	}
	f.Collection = target.ID
	if o.Cascade && o.Restrict {
		return "cascade and restrict cannot both be set"
	}
	return cleanMaxSelect(&f.Options)
}

func (relationType) Normalize(f *Field, in any) (any, string) {
	if !f.Multiple {
		switch s := in.(type) {
		case nil:
			return nil, ""
		case string:
			if s == "" {
				return nil, ""
			}
			if !recordID.MatchString(s) {
				return nil, "must be a record id"
			}
			return s, ""
		}
		return nil, "must be a record id"
	}
	if in == nil {
		return nil, ""
	}
	list, ok := stringListInput(in)
	if !ok {
		return nil, "must be an array of record ids"
	}
	list = dedupe(list)
	for _, s := range list {
		if !recordID.MatchString(s) {
			return nil, fmt.Sprintf("%q is not a record id", s)
		}
	}
	if f.MaxSelect > 0 && len(list) > f.MaxSelect {
		return nil, fmt.Sprintf("must have at most %d records", f.MaxSelect)
	}
	return encodeStringList(list), ""
}

func (relationType) IsZero(f *Field, stored any) bool {
	if f.Multiple {
		return isZeroList(stored)
	}
	return isZeroText(stored)
}

func (relationType) AppendJSON(buf []byte, f *Field, stored any) []byte {
	if f.Multiple {
		return appendStringList(buf, storedStringList(stored))
	}
	return appendStoredText(buf, stored)
}
