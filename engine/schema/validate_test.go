package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestIsSystemName(t *testing.T) {
	for _, name := range []string{"id", "created", "updated", "collectionId", "collectionName", "expand", "ID", "Created", "collectionid"} {
		if !IsSystemName(name) {
			t.Errorf("IsSystemName(%q) = false", name)
		}
	}
	for _, name := range []string{"title", "ids", "_id", "creator", "email", ""} {
		if IsSystemName(name) {
			t.Errorf("IsSystemName(%q) = true", name)
		}
	}
}

func TestValidateField(t *testing.T) {
	lookup := fakeLookup{{ID: "col_aaaaaaaaaaaaaaa", Name: "posts"}}
	cases := []struct {
		name string
		f    Field
		msg  string
	}{
		{name: "ok", f: Field{Name: "title", Type: FieldText}},
		{name: "underscore", f: Field{Name: "_x", Type: FieldText}},
		{name: "digits", f: Field{Name: "a1_b2", Type: FieldText}},
		{name: "max length", f: Field{Name: "a" + strings.Repeat("b", 62), Type: FieldText}},
		{name: "too long", f: Field{Name: "a" + strings.Repeat("b", 63), Type: FieldText}, msg: "name must match"},
		{name: "empty name", f: Field{Name: "", Type: FieldText}, msg: "name must match"},
		{name: "leading digit", f: Field{Name: "1a", Type: FieldText}, msg: "name must match"},
		{name: "dash", f: Field{Name: "a-b", Type: FieldText}, msg: "name must match"},
		{name: "dot", f: Field{Name: "a.b", Type: FieldText}, msg: "name must match"},
		{name: "unicode", f: Field{Name: "é", Type: FieldText}, msg: "name must match"},
		{name: "system", f: Field{Name: "id", Type: FieldText}, msg: `name "id" is reserved`},
		{name: "system case", f: Field{Name: "Updated", Type: FieldText}, msg: "is reserved"},
		{name: "expand", f: Field{Name: "expand", Type: FieldJSON}, msg: "is reserved"},
		{name: "unknown type", f: Field{Name: "a", Type: "integer"}, msg: `unknown field type "integer"`},
		{name: "empty type", f: Field{Name: "a"}, msg: "unknown field type"},
		{name: "options checked", f: Field{Name: "a", Type: FieldVector}, msg: "dimensions"},
		{name: "relation resolved", f: Field{Name: "post", Type: FieldRelation, Options: Options{Collection: "posts"}}},
		{name: "relation unknown", f: Field{Name: "post", Type: FieldRelation, Options: Options{Collection: "x"}}, msg: "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			msg := ValidateField(&f, lookup)
			if c.msg == "" && msg != "" {
				t.Fatalf("ValidateField = %q, want success", msg)
			}
			if c.msg != "" && !strings.Contains(msg, c.msg) {
				t.Fatalf("ValidateField = %q, want containing %q", msg, c.msg)
			}
		})
	}
}

func TestValidateFieldDropsForeignOptions(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"name":"flag","type":"bool","min":3,"values":["a"]}`,
			`{"id":"","name":"flag","type":"bool","required":false,"unique":false,"hidden":false}`},
		{`{"name":"n","type":"number","min":1,"pattern":"x","integer":true,"dimensions":4}`,
			`{"id":"","name":"n","type":"number","required":true,"unique":false,"hidden":false,"min":1,"integer":true}`},
		{`{"name":"post","type":"relation","collection":"posts","cascade":true,"maxSize":5}`,
			`{"id":"","name":"post","type":"relation","required":false,"unique":false,"hidden":false,"collection":"col_aaaaaaaaaaaaaaa","cascade":true}`},
		{`{"name":"doc","type":"file","maxSize":5,"mimeTypes":["Image/PNG"],"viewRule":"","max_size":9}`,
			`{"id":"","name":"doc","type":"file","required":false,"unique":false,"hidden":false,"maxSize":5,"mimeTypes":["image/png"],"viewRule":""}`},
	} {
		var f Field
		if err := json.Unmarshal([]byte(tc.in), &f); err != nil {
			t.Fatal(err)
		}
		if f.Type == FieldNumber {
			f.Required = true
		}
		if msg := ValidateField(&f, fakeLookup{{ID: "col_aaaaaaaaaaaaaaa", Name: "posts"}}); msg != "" {
			t.Fatalf("%s: %s", tc.in, msg)
		}
		out, _ := json.Marshal(&f)
		if string(out) != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.in, out, tc.want)
		}
	}
}

func TestNormalizeValue(t *testing.T) {
	cases := []struct {
		name string
		f    Field
		in   any
		want any
		msg  string
	}{
		{name: "optional absent", f: Field{Type: FieldText}, in: nil, want: nil},
		{name: "optional empty", f: Field{Type: FieldText}, in: "", want: ""},
		{name: "required absent", f: Field{Type: FieldText, Required: true}, in: nil, msg: "cannot be blank"},
		{name: "required empty", f: Field{Type: FieldText, Required: true}, in: "", msg: "cannot be blank"},
		{name: "required set", f: Field{Type: FieldText, Required: true}, in: "x", want: "x"},
		{name: "type error first", f: Field{Type: FieldText, Required: true}, in: num("1"), msg: "must be a string"},
		{name: "required bool false", f: Field{Type: FieldBool, Required: true}, in: false, msg: "cannot be blank"},
		{name: "required bool absent", f: Field{Type: FieldBool, Required: true}, in: nil, msg: "cannot be blank"},
		{name: "required bool true", f: Field{Type: FieldBool, Required: true}, in: true, want: int64(1)},
		{name: "optional bool absent", f: Field{Type: FieldBool}, in: nil, want: int64(0)},
		{name: "required number zero", f: Field{Type: FieldNumber, Required: true}, in: num("0"), msg: "cannot be blank"},
		{name: "required number", f: Field{Type: FieldNumber, Required: true}, in: num("2"), want: 2.0},
		{name: "required date epoch", f: Field{Type: FieldDate, Required: true}, in: num("0"), want: int64(0)},
		{name: "required email blank", f: Field{Type: FieldEmail, Required: true}, in: "  ", msg: "cannot be blank"},
		{name: "required multi select empty", f: Field{Type: FieldSelect, Required: true, Options: Options{Values: []string{"a"}, Multiple: true}}, in: []any{}, msg: "cannot be blank"},
		{name: "required json null", f: Field{Type: FieldJSON, Required: true}, in: nil, msg: "cannot be blank"},
		{name: "required json empty object", f: Field{Type: FieldJSON, Required: true}, in: map[string]any{}, msg: "cannot be blank"},
		{name: "required json zero", f: Field{Type: FieldJSON, Required: true}, in: num("0"), want: "0"},
		{name: "required password empty", f: Field{Type: FieldPassword, Required: true}, in: "", msg: "cannot be blank"},
		{name: "required vector absent", f: Field{Type: FieldVector, Required: true, Options: Options{Dimensions: 2}}, in: nil, msg: "cannot be blank"},
		{name: "required autodate filled by engine", f: Field{Type: FieldAutodate, Required: true, Options: Options{OnCreate: true}}, in: nil, want: nil},
		{name: "required file set by upload", f: Field{Type: FieldFile, Required: true}, in: nil, want: nil},
		{name: "required file body", f: Field{Type: FieldFile, Required: true}, in: "a.png", msg: "uploading"},
		{name: "unknown type", f: Field{Type: "nope"}, in: "x", msg: `unknown field type "nope"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			f.Name = "f"
			got, msg := NormalizeValue(&f, c.in)
			if c.msg != "" {
				if !strings.Contains(msg, c.msg) || got != nil {
					t.Fatalf("NormalizeValue = %#v, %q; want failure containing %q", got, msg, c.msg)
				}
				return
			}
			if msg != "" || got != c.want {
				t.Fatalf("NormalizeValue = %#v, %q; want %#v", got, msg, c.want)
			}
		})
	}
}
