package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// fuzzFields are one field of each type, with options that exercise the
// validators.
func fuzzFields() []*Field {
	min, max := 1.0, 50.0
	return []*Field{
		{Name: "t", Type: FieldText, Options: Options{Min: &min, Max: &max, Pattern: `[a-z ]*`}},
		{Name: "e", Type: FieldEditor},
		{Name: "m", Type: FieldEmail, Options: Options{DomainsExcept: []string{"example.org"}}},
		{Name: "u", Type: FieldURL},
		{Name: "n", Type: FieldNumber, Options: Options{Min: &min, Max: &max}},
		{Name: "b", Type: FieldBool},
		{Name: "d", Type: FieldDate},
		{Name: "a", Type: FieldAutodate, Options: Options{OnCreate: true}},
		{Name: "s", Type: FieldSelect, Options: Options{Values: []string{"x", "y", "z"}, Multiple: true, MaxSelect: 2}},
		{Name: "j", Type: FieldJSON, Options: Options{MaxSize: 256}},
		{Name: "g", Type: FieldGeoPoint},
		{Name: "r", Type: FieldRelation, Options: Options{Collection: "col_x", Multiple: true}},
		{Name: "f", Type: FieldFile},
		{Name: "p", Type: FieldPassword},
		{Name: "v", Type: FieldVector, Options: Options{Dimensions: 3}},
	}
}

// FuzzNormalize feeds arbitrary JSON values to every field type: Normalize
// must never panic, and whatever it accepts must print as valid JSON and be
// accepted again when fed back (stored values are stable).
func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{
		`"hello"`, `12`, `-0`, `1e308`, `true`, `null`, `[]`, `["x","y","x"]`, `{"lon":1,"lat":2}`,
		`"2024-02-29T12:00:00Z"`, `"abc@example.com"`, `"https://example.com/a?b=c"`, `[1,2,3]`,
		`"abcdefghijklmno"`, `{"a":[1,{"b":null}]}`, `"\u0000"`, `1.5`, `"1700000000"`,
	} {
		f.Add(seed)
	}
	fields := fuzzFields()
	f.Fuzz(func(t *testing.T, raw string) {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var in any
		if err := dec.Decode(&in); err != nil {
			return
		}
		for _, fd := range fields {
			typ, _ := TypeOf(fd.Type)
			stored, msg := NormalizeValue(fd, in)
			if msg != "" {
				continue
			}
			out := typ.AppendJSON(nil, fd, stored)
			if !json.Valid(out) {
				t.Fatalf("%s: %q stored as %#v prints invalid JSON %q", fd.Type, raw, stored, out)
			}
			if fd.Type == FieldPassword || fd.Type == FieldAutodate || fd.Type == FieldFile {
				continue
			}
			d2 := json.NewDecoder(strings.NewReader(string(out)))
			d2.UseNumber()
			var again any
			if err := d2.Decode(&again); err != nil {
				t.Fatalf("%s: reparse %q: %v", fd.Type, out, err)
			}
			if _, msg := NormalizeValue(fd, again); msg != "" {
				t.Fatalf("%s: %q accepted, printed as %q, then refused: %s", fd.Type, raw, out, msg)
			}
		}
	})
}
