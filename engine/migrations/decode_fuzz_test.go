package migrations

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSnapshotDecode: Decode never panics; what it accepts has a format
// version this binary knows and collections named once each, and survives
// a round trip (encode, decode) unchanged, so a snapshot written by one
// node reads back the same on another.
func FuzzSnapshotDecode(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"collections":[]}`,
		`{"version":1,"schema_version":18,"collections":[{"name":"posts","type":"base","fields":[{"name":"title","type":"text","required":true,"max":20},{"name":"author","type":"relation","collection":"users","cascade":true}],"view_rule":"","create_rule":null,"update_rule":null,"delete_rule":null,"history_enabled":true,"indexes":[{"field":"title","unique":false}]},{"name":"users","type":"auth","fields":[],"auth_options":{"password":true,"otp":false}, "indexes":[]}]}`,
		`{"version":1,"collections":[{"name":"v","type":"view","view_query":"SELECT id FROM posts","fields":[],"indexes":[{"field":"x"}]}]}`,
		`{"version":2,"collections":[]}`,
		`{"version":1,"collections":[{"name":"a","type":"base"},{"name":"A","type":"base"}]}`,
		`{"version":1,"collections":[],"extra":true}`,
		`{"version":1,"collections":[]} {}`,
		`[]`, `null`, ``, `{"version":"1"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			return
		}
		if s.Version < 1 || s.Version > FormatVersion {
			t.Fatalf("accepted version %d", s.Version)
		}
		seen := map[string]bool{}
		for _, c := range s.Collections {
			l := strings.ToLower(c.Name)
			if l == "" || seen[l] {
				t.Fatalf("accepted collection name %q (blank or twice)", c.Name)
			}
			seen[l] = true
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("encode an accepted snapshot: %v", err)
		}
		back, err := Decode(out)
		if err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(out) || len(back.Collections) != len(s.Collections) {
			t.Fatalf("round trip changed the snapshot:\n%s\n%s", out, again)
		}
	})
}
