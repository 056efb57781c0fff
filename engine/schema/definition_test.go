package schema

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestCheckDefinition(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       map[string]string
	}{
		{"a clean definition", `{"name":"posts","fields":[{"name":"t","type":"text","max":5}],"view_rule":""}`, nil},
		{"not an object is the decoder's", `[1,2]`, nil},
		{"PocketBase names", `{"name":"p","listRule":"","schema":[]}`, map[string]string{
			"listRule": `unknown key (did you mean "view_rule"?)`, "schema": `unknown key (did you mean "fields"?)`,
		}},
		{"another spelling", `{"name":"p","viewQuery":"","History_Enabled":true}`, map[string]string{
			"viewQuery": `unknown key (did you mean "view_query"?)`, "History_Enabled": `unknown key (did you mean "history_enabled"?)`,
		}},
		{"a key nothing resembles", `{"name":"p","colour":"blue"}`, map[string]string{"colour": "unknown key"}},
		{"read-only keys of a GET answer", `{"id":"col_x","name":"p","created":1,"updated":2,"rule_errors":{"view_rule":"x"}}`, nil},
		{"a typo in a field", `{"fields":[{"name":"a","type":"text"},{"name":"b","type":"text","requried":true}]}`, map[string]string{
			"fields.1.requried": `unknown key (did you mean "required"?)`,
		}},
		{"an option of another type", `{"fields":[{"name":"a","type":"text","values":["x"]},{"name":"b","type":"bool","max":1}]}`, map[string]string{
			"fields.0.values": "does not apply to a text field", "fields.1.max": "does not apply to a bool field",
		}},
		{"the file option is camelCase", `{"fields":[{"name":"f","type":"file","max_size":10}]}`, map[string]string{
			"fields.0.max_size": `does not apply to a file field (did you mean "maxSize"?)`,
		}},
		{"an option of another type given as null", `{"fields":[{"name":"a","type":"text","values":null}]}`, nil},
		{"an option of another type turned off", `{"fields":[{"name":"n","type":"number","searchable":false,"pattern":"","values":[]},{"name":"b","type":"bool","max":0}]}`, nil},
		{"an unknown key given as null", `{"fields":[{"name":"a","type":"text","maxx":null}]}`, map[string]string{
			"fields.0.maxx": `unknown key (did you mean "max"?)`,
		}},
		{"an unknown type: only unknown keys", `{"fields":[{"name":"a","type":"nope","values":["x"],"colour":1}]}`, map[string]string{
			"fields.0.colour": "unknown key",
		}},
		{"the wrong JSON kind names the field", `{"fields":[{"name":"a","type":"text"},{"name":"n","type":"number","max":"5"}]}`, map[string]string{
			"fields.1.max": "must be a number",
		}},
		{"auth options", `{"type":"auth","auth_options":{"password":true,"otpp":true}}`, map[string]string{
			"auth_options.otpp": `unknown key (did you mean "otp"?)`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckDefinition([]byte(c.body))
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("CheckDefinition(%s)\n got %v\nwant %v", c.body, got, c.want)
			}
		})
	}
}

// optionSamples are a valid value of every option key, for a field whose
// base options (optionBase) are valid.
var optionSamples = map[string]any{
	"min": 1, "max": 5, "pattern": "a+", "searchable": true, "encrypted": true,
	"domains_only": []string{"a.example"}, "domains_except": []string{"b.example"}, "integer": true,
	"on_create": true, "on_update": true, "values": []string{"a", "b"}, "multiple": true, "max_select": 2,
	"max_size": 10, "collection": "col_other", "cascade": true, "restrict": true, "dimensions": 4,
	"maxSize": 10, "mimeTypes": []string{"image/png"}, "viewRule": "", "requireAuth": true,
	"protected": true, "oneTimeToken": true, "bindTokenIp": true, "auditDownloads": true,
}

// optionBase are the options a field of a type needs to be valid at all.
var optionBase = map[string]map[string]any{
	FieldSelect:   {"values": []string{"a"}, "multiple": true},
	FieldRelation: {"collection": "col_other", "multiple": true},
	FieldVector:   {"dimensions": 3},
	FieldAutodate: {"on_create": true},
}

// TestOptionKeysAreWhatCleanOptionsKeeps: each type's OptionKeys are
// exactly the options its CleanOptions keeps, for every option key the
// Options struct has. A key listed but dropped would be accepted and lost;
// a key kept but not listed would appear in a GET answer that cannot be
// sent back.
func TestOptionKeysAreWhatCleanOptionsKeeps(t *testing.T) {
	var all []string
	ot := reflect.TypeOf(Options{})
	for i := 0; i < ot.NumField(); i++ {
		all = append(all, strings.Split(ot.Field(i).Tag.Get("json"), ",")[0])
	}
	sort.Strings(all)
	if got := allOptionKeys(); !reflect.DeepEqual(got, all) {
		t.Fatalf("the types' OptionKeys cover %v; Options has %v", got, all)
	}
	lookup := fakeLookup{{ID: "col_other", Name: "other"}}
	for _, typ := range TypeNames() {
		ft, _ := TypeOf(typ)
		for _, key := range all {
			sample, ok := optionSamples[key]
			if !ok {
				t.Fatalf("option %q has no sample value", key)
			}
			def := map[string]any{"name": "f", "type": typ}
			for k, v := range optionBase[typ] {
				def[k] = v
			}
			def[key] = sample
			raw, _ := json.Marshal(def)
			var f Field
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			if msg := ft.CleanOptions(&f, lookup); msg != "" {
				t.Fatalf("%s with %s: %s", typ, raw, msg)
			}
			out, _ := json.Marshal(&f)
			var kept map[string]any
			json.Unmarshal(out, &kept)
			_, isKept := kept[key]
			if listed := contains(ft.OptionKeys(), key); listed != isKept {
				t.Errorf("%s: option %q listed %v, kept by CleanOptions %v", typ, key, listed, isKept)
			}
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"requried", "required", 1}, {"", "abc", 3}, {"max", "max", 0}, {"kitten", "sitting", 3}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// FuzzDefinition: CheckDefinition never panics, and what it accepts keeps
// being accepted once stored: the definition decoded and its fields
// cleaned (as a save does), encoded again (as a GET answers it), passes
// the check, so a GET answer can always be sent back.
func FuzzDefinition(f *testing.F) {
	for _, seed := range []string{
		`{"name":"posts","fields":[{"name":"t","type":"text","max":5,"pattern":"a"}],"view_rule":""}`,
		`{"name":"u","type":"auth","auth_options":{"otp":true},"fields":[{"name":"r","type":"relation","collection":"other","multiple":true,"max_select":2}]}`,
		`{"id":"col_x","created":1,"fields":[{"id":"fld_a","name":"s","type":"select","values":["a"],"max_select":3}]}`,
		`{"fields":[{"name":"f","type":"file","maxSize":5,"mimeTypes":["IMAGE/png"],"viewRule":null}]}`,
		`{"fields":[{"name":"b","type":"bool","max":null},{"name":"v","type":"vector","dimensions":2}]}`,
		`{"listRule":"","schema":[]}`, `{"fields":[{"requried":true}]}`, `{"fields":5}`, `[]`, `null`,
	} {
		f.Add(seed)
	}
	lookup := fakeLookup{{ID: "col_other", Name: "other"}}
	f.Fuzz(func(t *testing.T, body string) {
		if CheckDefinition([]byte(body)) != nil {
			return
		}
		var c Collection
		if json.Unmarshal([]byte(body), &c) != nil {
			return
		}
		kept := c.Fields[:0]
		for _, fd := range c.Fields {
			if fd != nil && ValidateField(fd, lookup) == "" {
				kept = append(kept, fd)
			}
		}
		c.Fields = kept
		out, err := json.Marshal(&c)
		if err != nil {
			t.Fatalf("%q: encode: %v", body, err)
		}
		if d := CheckDefinition(out); d != nil {
			t.Fatalf("%q accepted, stored as %s, then refused: %v", body, out, d)
		}
	})
}
