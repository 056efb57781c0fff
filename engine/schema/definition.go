package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// A collection definition is refused where it is wrong instead of being
// decoded leniently: encoding/json drops a key it does not know (PocketBase's
// `listRule`, a `requried` typo) and matches keys without regard to case, so
// a mistake became a collection with default rules and no error. The JSON
// object is checked before it is decoded: every key must be a member of the
// collection, of its auth options or of the field's type.

// collectionKeys are the members a definition may set.
var collectionKeys = []string{
	"name", "type", "fields", "view_rule", "create_rule", "update_rule", "delete_rule",
	"history_enabled", "view_query", "auth_options",
}

// readOnlyKeys are members of the collection object that a client may send
// back as it got them (a GET answer edited and sent again): they are
// ignored. rule_errors is the admin view's report of broken rules.
var readOnlyKeys = []string{"id", "created", "updated", "rule_errors"}

// fieldKeys are the members of every field, whatever its type.
var fieldKeys = []string{"id", "name", "type", "required", "unique", "hidden"}

// authOptionKeys are the members of auth_options.
var authOptionKeys = []string{"password", "otp", "anonymous", "mfa", "oauth2"}

// aliases name our member for keys that other products use for the same
// thing, so the refusal can say what to write instead.
var aliases = map[string]string{
	"listRule": "view_rule", "viewRule": "view_rule", "createRule": "create_rule",
	"updateRule": "update_rule", "deleteRule": "delete_rule", "schema": "fields",
}

// CheckDefinition checks the JSON object of a collection definition (a
// create's body, or a PATCH's members) and answers, per bad key, why:
// "listRule" → `unknown key (did you mean "view_rule"?)`,
// "fields.1.requried" → `unknown key (did you mean "required"?)`,
// "fields.0.values" → "does not apply to a text field" (unless it is
// null or the zero value of its kind: `"searchable": false` on a number
// field changes nothing and is accepted), "fields.2.max" →
// "must be a number". Keys of readOnlyKeys are accepted (and ignored by
// the caller). A body that is not a JSON object is left to the decoder: the
// answer is nil, as it is for a definition without a bad key.
func CheckDefinition(body []byte) map[string]string {
	top, ok := object(body)
	if !ok {
		return nil
	}
	d := map[string]string{}
	for k, v := range top {
		switch {
		case contains(collectionKeys, k), contains(readOnlyKeys, k):
		default:
			d[k] = unknownKey(k, collectionKeys)
			continue
		}
		switch k {
		case "auth_options":
			if opts, ok := object(v); ok {
				for o := range opts {
					if !contains(authOptionKeys, o) {
						d["auth_options."+o] = unknownKey(o, authOptionKeys)
					}
				}
			}
		case "fields":
			var fields []json.RawMessage
			if json.Unmarshal(v, &fields) != nil {
				continue
			}
			for i, raw := range fields {
				checkField(raw, fmt.Sprintf("fields.%d", i), d)
			}
		}
	}
	if len(d) == 0 {
		return nil
	}
	return d
}

// checkField checks the keys of one field object (key is its place,
// "fields.N"): known to the field's type, and of the right JSON kind.
func checkField(raw json.RawMessage, key string, d map[string]string) {
	members, ok := object(raw)
	if !ok {
		return // not an object: the decoder says so
	}
	var typeName string
	json.Unmarshal(members["type"], &typeName)
	t, known := TypeOf(typeName)
	all := allOptionKeys()
	for k, v := range members {
		switch {
		case contains(fieldKeys, k):
		case !contains(all, k):
			d[key+"."+k] = unknownKey(k, append(append([]string(nil), fieldKeys...), optionsOf(t, all)...))
		case known && !contains(t.OptionKeys(), k) && !isZeroJSON(v):
			msg := fmt.Sprintf("does not apply to a %s field", typeName)
			if s := suggest(k, t.OptionKeys()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d[key+"."+k] = msg
		}
	}
	// The JSON kind of each member, named with the field's place (the
	// decoder of the whole definition could not say which field).
	var f Field
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var ute *json.UnmarshalTypeError
	if err := dec.Decode(&f); errors.As(err, &ute) && ute.Field != "" {
		member := ute.Field[strings.LastIndex(ute.Field, ".")+1:]
		if _, taken := d[key+"."+member]; !taken {
			d[key+"."+member] = "must be " + JSONKindName(ute.Type)
		}
	}
}

// optionsOf are the option keys a field of type t may carry: its own, or
// every type's when the type is unknown.
func optionsOf(t FieldType, all []string) []string {
	if t == nil {
		return all
	}
	return t.OptionKeys()
}

// allOptionKeys is every option key of every type, sorted.
func allOptionKeys() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range TypeNames() {
		t, _ := TypeOf(n)
		for _, k := range t.OptionKeys() {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// unknownKey is the message for key k, which is none of known.
func unknownKey(k string, known []string) string {
	if s := aliases[k]; s != "" && contains(known, s) {
		return fmt.Sprintf("unknown key (did you mean %q?)", s)
	}
	if s := suggest(k, known); s != "" {
		return fmt.Sprintf("unknown key (did you mean %q?)", s)
	}
	return "unknown key"
}

// suggest is the member of known that k most likely meant: the same name
// written in another case or style (maxSelect, max_select), or one a typo
// or two away (requried); "" when none is close.
func suggest(k string, known []string) string {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for _, c := range known {
		if norm(c) == norm(k) {
			return c
		}
	}
	best, bestDist := "", 3
	if len(k) < 4 {
		bestDist = 2
	}
	for _, c := range known {
		if dist := editDistance(norm(k), norm(c)); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: edits
// of one character, or a swap of two neighbours, each count 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 64 // no suggestion for a long key
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// object decodes a JSON object's members; ok is false for anything else.
func object(b []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// isZeroJSON reports whether v is null or the zero value of its kind
// (false, 0, "", [], {}): an option of another type set so changes nothing,
// and a client that turns an option off on every field is not refused.
func isZeroJSON(v json.RawMessage) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	switch x := x.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// JSONKindName names the JSON kind a Go type decodes from ("a string",
// "an object", ...), for messages about a member of the wrong kind.
func JSONKindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return JSONKindName(t.Elem())
	}
	return "a number"
}
