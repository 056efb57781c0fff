package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// fieldName is the shape of a field name.
var fieldName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,62}$`)

// IsSystemName reports whether name is a column or key every record has,
// and so cannot name a field: id, created, updated, collectionId,
// collectionName, expand. The comparison ignores case, as SQLite column
// names do. Auth collections reserve more names; their owner checks those.
func IsSystemName(name string) bool {
	for _, s := range [...]string{"id", "created", "updated", "collectionId", "collectionName", "expand"} {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// ValidateField checks a field's name and type and cleans its options
// (dropping those that do not apply, resolving a relation's collection to
// its id through lookup). msg != "" names the first problem.
func ValidateField(f *Field, lookup Lookup) (msg string) {
	if !fieldName.MatchString(f.Name) {
		return "name must match ^[a-zA-Z_][a-zA-Z0-9_]{0,62}$"
	}
	if IsSystemName(f.Name) {
		return fmt.Sprintf("name %q is reserved", f.Name)
	}
	t, ok := TypeOf(f.Type)
	if !ok {
		return fmt.Sprintf("unknown field type %q", f.Type)
	}
	return t.CleanOptions(f, lookup)
}

// NormalizeValue validates an input value for f and returns its stored
// form: the type's Normalize, then required (a required field whose value
// is blank, absent included, fails). Required is not applied to autodate
// fields, which the engine fills, nor to file fields, whose values only the
// files endpoints set: the engine checks a required file field on the
// names a write leaves it (a create's uploads, an update's removals).
func NormalizeValue(f *Field, in any) (stored any, msg string) {
	t, ok := TypeOf(f.Type)
	if !ok {
		return nil, fmt.Sprintf("unknown field type %q", f.Type)
	}
	stored, msg = t.Normalize(f, in)
	if msg != "" {
		return nil, msg
	}
	if f.Required && f.Type != FieldAutodate && f.Type != FieldFile && t.IsZero(f, stored) {
		return nil, "cannot be blank"
	}
	return stored, ""
}
