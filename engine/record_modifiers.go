package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"svcd/engine/schema"
)

// Write modifiers are PocketBase's relative field updates in an update
// body: "views+": 1 adds, "views-": 1 subtracts (number fields);
// "tags+": "x" appends, "+tags": "x" prepends and "tags-": "x" removes
// (multiple select and relation fields; a string or an array of strings).
// The API side (SplitModifiers) takes them out of the body and checks
// their operands; the state machine applies them (applyModifiers) to the
// row it reads in the update's transaction, so concurrent "views+" from
// any node never lose an increment. File fields keep their own modifiers
// (multipart only, engine/files).

// Modifier operations.
const (
	ModAdd     = "add"     // number: Num is added (negative for "field-")
	ModAppend  = "append"  // list: List is appended
	ModPrepend = "prepend" // list: List is prepended
	ModRemove  = "remove"  // list: every value of List is removed
)

// FieldMod is one write modifier as the update command carries it.
type FieldMod struct {
	Field string   `json:"field"`
	Op    string   `json:"op"`
	Num   float64  `json:"num,omitempty"`
	List  []string `json:"list,omitempty"`
}

// modKey parses a body key as a modifier of a field of ci: the field, and
// the sign ("+" suffix, "-" suffix, or "^" for a "+" prefix); ok is false
// for a plain key or one naming no field.
func modKey(ci *Coll, key string) (f *FieldInfo, sign byte, ok bool) {
	name := key
	switch {
	case strings.HasPrefix(key, "+"):
		name, sign = key[1:], '^'
	case strings.HasSuffix(key, "+"):
		name, sign = key[:len(key)-1], '+'
	case strings.HasSuffix(key, "-"):
		name, sign = key[:len(key)-1], '-'
	default:
		return nil, 0, false
	}
	for _, fi := range ci.fields {
		if fi.Name == name && !fi.system {
			return fi, sign, true
		}
	}
	return nil, 0, false
}

// SplitModifiers takes the write modifiers out of an update body of a
// record of ci: the body without them and the modifiers, in key order (a
// field's plain value, when also sent, is set first and the modifiers
// apply on top). File fields' modifiers stay in the body (engine/files).
// A modifier on a field it does not apply to, or with a bad operand, is
// a validation error naming the key.
func SplitModifiers(ci *Coll, body map[string]any) (map[string]any, []FieldMod, *Error) {
	var mods []FieldMod
	var out map[string]any
	d := map[string]string{}
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f, sign, ok := modKey(ci, k)
		if !ok || f.Type == schema.FieldFile {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(body))
			for k2, v := range body {
				out[k2] = v
			}
		}
		delete(out, k)
		m, msg := fieldMod(f, sign, body[k])
		if msg != "" {
			d[k] = msg
			continue
		}
		mods = append(mods, m)
	}
	if len(d) > 0 {
		return nil, nil, ValidationError(d)
	}
	if out == nil {
		return body, nil, nil
	}
	return out, mods, nil
}

// fieldMod checks one modifier's operand.
func fieldMod(f *FieldInfo, sign byte, v any) (FieldMod, string) {
	m := FieldMod{Field: f.Name}
	switch {
	case f.Type == schema.FieldNumber:
		if sign == '^' {
			return m, "a number takes field+ or field-"
		}
		n, ok := modNumber(v)
		if !ok {
			return m, "must be a number"
		}
		if sign == '-' {
			n = -n
		}
		m.Op, m.Num = ModAdd, n
	case (f.Type == schema.FieldSelect || f.Type == schema.FieldRelation) && f.Multiple:
		list, ok := modList(v)
		if !ok {
			return m, "must be a string or an array of strings"
		}
		m.List = list
		m.Op = map[byte]string{'+': ModAppend, '^': ModPrepend, '-': ModRemove}[sign]
	default:
		return m, "modifiers apply to number fields and multiple select or relation fields"
	}
	return m, ""
}

func modNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

func modList(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []string:
		return x, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// applyModifiers computes, inside the update's transaction, the stored
// values the modifiers give from the row old (or from the value the same
// command sets) and validates them as a plain value would be. It returns
// values with the results added (a new map; the command's stays as it
// was). Deterministic: it reads only the row and the command.
func applyModifiers(ci *Coll, old []any, values map[string]any, mods []FieldMod) (map[string]any, error) {
	out := make(map[string]any, len(values)+len(mods))
	for k, v := range values {
		out[k] = v
	}
	d := map[string]string{}
	for _, m := range mods {
		i := slices.IndexFunc(ci.fields, func(f *FieldInfo) bool { return f.Name == m.Field })
		if i < 0 {
			return nil, Errorf(KindBadRequest, "no field %q", m.Field)
		}
		f := ci.fields[i]
		cur, set := out[f.Name]
		if !set {
			cur = old[3+i]
		}
		var in any
		switch m.Op {
		case ModAdd:
			n, _ := modNumber(cur)
			in = n + m.Num
		case ModAppend, ModPrepend, ModRemove:
			list, err := storedList(cur)
			if err != nil {
				return nil, err
			}
			switch m.Op {
			case ModAppend:
				list = append(list, m.List...)
			case ModPrepend:
				list = append(slices.Clone(m.List), list...)
			default:
				list = slices.DeleteFunc(list, func(s string) bool { return slices.Contains(m.List, s) })
			}
			in = list
		default:
			return nil, Errorf(KindBadRequest, "unknown modifier %q", m.Op)
		}
		stored, msg := schema.NormalizeValue(f.Field, in)
		if msg != "" {
			d[f.Name] = msg
			continue
		}
		out[f.Name] = stored
	}
	if len(d) > 0 {
		return nil, ValidationError(d)
	}
	return out, nil
}

// ApplyModifiers is applyModifiers for a module's update command (a
// multipart update's modifiers, engine/files), inside its transaction.
func ApplyModifiers(ci *Coll, old []any, values map[string]any, mods []FieldMod) (map[string]any, error) {
	return applyModifiers(ci, old, values, mods)
}

// storedList reads a stored multiple select or relation value (a JSON
// array as text, or null).
func storedList(v any) ([]string, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return []string{}, nil
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return nil, fmt.Errorf("engine: unexpected stored list %T", v)
	}
	if s == "" {
		return []string{}, nil
	}
	var list []string
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return nil, fmt.Errorf("engine: stored list: %w", err)
	}
	return list, nil
}

// FoldCreateModifiers turns the write modifiers of a create body into
// plain values, as PocketBase applies them to a new record: over the
// body's plain value of the field, else over nothing (0 or no values).
// A create has no stored row, so this needs no state machine step.
func FoldCreateModifiers(ci *Coll, body map[string]any) (map[string]any, *Error) {
	plain, mods, verr := SplitModifiers(ci, body)
	if verr != nil || len(mods) == 0 {
		return plain, verr
	}
	d := map[string]string{}
	for _, m := range mods {
		base := plain[m.Field]
		switch m.Op {
		case ModAdd:
			n, ok := modNumber(base)
			if base != nil && !ok {
				d[m.Field] = "must be a number"
				continue
			}
			plain[m.Field] = n + m.Num
		default:
			list, ok := modList(base)
			if base == nil {
				list, ok = []string{}, true
			}
			if !ok {
				d[m.Field] = "must be an array of strings"
				continue
			}
			switch m.Op {
			case ModAppend:
				list = append(slices.Clone(list), m.List...)
			case ModPrepend:
				list = append(slices.Clone(m.List), list...)
			default:
				list = slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(m.List, s) })
			}
			plain[m.Field] = list
		}
	}
	if len(d) > 0 {
		return nil, ValidationError(d)
	}
	return plain, nil
}
