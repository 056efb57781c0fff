package schema

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestTypeOf(t *testing.T) {
	columns := map[string]Column{
		FieldText: ColText, FieldEditor: ColText, FieldEmail: ColText, FieldURL: ColText,
		FieldNumber: ColReal, FieldBool: ColInteger, FieldDate: ColInteger, FieldAutodate: ColInteger,
		FieldSelect: ColText, FieldJSON: ColText, FieldGeoPoint: ColText, FieldRelation: ColText,
		FieldFile: ColText, FieldPassword: ColText, FieldVector: ColBlob,
	}
	names := TypeNames()
	if len(names) != len(columns) {
		t.Fatalf("TypeNames has %d names, want %d", len(names), len(columns))
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			t.Fatalf("TypeNames repeats %q", name)
		}
		seen[name] = true
		ft, ok := TypeOf(name)
		if !ok {
			t.Fatalf("TypeOf(%q) unknown", name)
		}
		if ft.Name() != name {
			t.Fatalf("TypeOf(%q).Name() = %q", name, ft.Name())
		}
		want, ok := columns[name]
		if !ok {
			t.Fatalf("unexpected type %q", name)
		}
		if got := ft.Column(&Field{Type: name}); got != want {
			t.Fatalf("%s column = %s, want %s", name, got, want)
		}
	}
	for _, name := range []string{"", "Text", "geopoint", "GeoPoint", "integer", "string"} {
		if _, ok := TypeOf(name); ok {
			t.Fatalf("TypeOf(%q) known", name)
		}
	}
	names[0] = "changed"
	if TypeNames()[0] != FieldText {
		t.Fatal("TypeNames shares its slice")
	}
}

// oddStored is every kind of stored value a column might hold, including
// ones a type never writes itself (after a type change, or corrupt).
func oddStored() []any {
	return []any{
		nil, int64(0), int64(1), int64(-7), int64(math.MaxInt64), 0.0, 1.5, -1e300,
		math.NaN(), math.Inf(1), math.Inf(-1), "", "x", "1", "true", "null", "[]", "{}",
		`["a",1,null]`, `{"lon":1,"lat":2}`, `{"lon":"x"}`, "2023-11-14", "\xff\x00\"\\",
		`[1,2,3]`, `[1e999]`, []byte{}, []byte{0, 0, 0x80, 0x7f}, []byte{1, 2, 3},
		[]byte(`["a"]`), true, false,
	}
}

func TestAppendJSONNeverBreaks(t *testing.T) {
	for _, name := range TypeNames() {
		ft, _ := TypeOf(name)
		for _, multiple := range []bool{false, true} {
			f := &Field{Name: "f", Type: name, Options: Options{Multiple: multiple, Dimensions: 3, Values: []string{"a"}}}
			for _, stored := range oddStored() {
				out := ft.AppendJSON(nil, f, stored)
				if !json.Valid(out) {
					t.Errorf("%s (multiple=%v) AppendJSON(%#v) = %q is not valid JSON", name, multiple, stored, out)
				}
				_ = ft.IsZero(f, stored) // must not panic
			}
		}
	}
}

func TestNormalizeNeverPanics(t *testing.T) {
	inputs := []any{
		nil, true, false, "", "x", " 1 ", num("0"), num("1"), num("-1.5"), num("1e400"), 1.5, 3, int64(2),
		math.NaN(), []any{}, []any{"a"}, []any{num("1"), num("2"), num("3")}, []any{nil},
		map[string]any{}, map[string]any{"lon": num("1"), "lat": num("2")}, []string{"a"}, struct{}{},
	}
	lookup := fakeLookup{{ID: "col_aaaaaaaaaaaaaaa", Name: "posts"}}
	for _, name := range TypeNames() {
		ft, _ := TypeOf(name)
		for _, multiple := range []bool{false, true} {
			f := &Field{Name: "f", Type: name, Options: Options{
				Multiple: multiple, Dimensions: 3, Values: []string{"a"}, Collection: "posts",
				OnCreate: true, Min: ptr(0), Max: ptr(100),
			}}
			if msg := ValidateField(f, lookup); msg != "" {
				t.Fatalf("%s: ValidateField: %s", name, msg)
			}
			for _, in := range inputs {
				stored, msg := ft.Normalize(f, in)
				if msg != "" {
					if stored != nil {
						t.Errorf("%s Normalize(%#v) failed with %q but stored %#v", name, in, msg, stored)
					}
					continue
				}
				if out := ft.AppendJSON(nil, f, stored); !json.Valid(out) {
					t.Errorf("%s Normalize(%#v) stored %#v which prints %q", name, in, stored, out)
				}
			}
		}
	}
}

func TestMessagesAreShortSentences(t *testing.T) {
	f := &Field{Name: "f", Type: FieldText, Options: Options{Max: ptr(2)}}
	_, msg := NormalizeValue(f, "abc")
	if msg != "must be at most 2 characters" {
		t.Fatalf("msg = %q", msg)
	}
	if strings.HasSuffix(msg, ".") || strings.ToLower(msg[:1]) != msg[:1] {
		t.Fatalf("msg %q is not a short lowercase sentence", msg)
	}
}
