package pbschema

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// names is a Lookup over a fixed map.
type names map[string]string

func (n names) SvcdName(s string) (string, bool) { v, ok := n[s]; return v, ok }

func load(t *testing.T, file string) PBCollection {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var c PBCollection
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func hasProblem(ps []Problem, where, substr string) bool {
	for _, p := range ps {
		if p.Where == where && strings.Contains(p.Message+p.Original, substr) {
			return true
		}
	}
	return false
}

func fieldByName(c Collection, name string) Field {
	for _, f := range c.Fields {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// TestTranslateAuthFromPocketBase uses the auth collection of
// PocketBase's own migratecmd test (plugins/migratecmd/migratecmd_test.go).
func TestTranslateAuthFromPocketBase(t *testing.T) {
	out, ps, err := Translate(load(t, "auth_new_name.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != "new_name" || out.Type != "auth" || out.Renamed {
		t.Fatalf("name/type = %s/%s renamed=%v", out.Name, out.Type, out.Renamed)
	}
	if len(out.Fields) != 1 || out.Fields[0].Name() != "emailVisibility" || out.Fields[0]["type"] != "bool" {
		t.Fatalf("fields = %v, want only emailVisibility (the others are svcd's system fields)", out.Fields)
	}
	want := "(@request.auth.id != '' && 1 > 0 || 'backtick`test' = 0) && (id = \"1\")"
	if out.ViewRule == nil || *out.ViewRule != want {
		t.Fatalf("view_rule = %v, want %s", out.ViewRule, want)
	}
	if out.CreateRule != nil || out.UpdateRule != nil || out.DeleteRule != nil {
		t.Fatalf("null rules must stay null")
	}
	if len(out.Indexes) != 0 {
		t.Fatalf("indexes = %v: id, email and tokenKey are svcd's own", out.Indexes)
	}
	if out.AuthOptions == nil || !out.AuthOptions.Password || out.AuthOptions.OTP || out.AuthOptions.OAuth2 {
		t.Fatalf("auth options = %+v", out.AuthOptions)
	}
	for _, w := range []struct{ where, sub string }{
		{"listRule/viewRule", "AND"},
		{"manageRule", "1 != 2"},
		{"tokenKey", "sign in again"},
	} {
		if !hasProblem(ps, w.where, w.sub) {
			t.Errorf("no problem %s ~ %q in %v", w.where, w.sub, ps)
		}
	}
	for _, p := range ps {
		if strings.HasPrefix(p.Where, "indexes") || strings.HasPrefix(p.Where, "fields.") {
			t.Errorf("unexpected problem %v", p)
		}
	}
	if out.FieldNames["verified"] != "email_verified" {
		t.Errorf("FieldNames[verified] = %q", out.FieldNames["verified"])
	}
}

// TestTranslateBaseAllTypes translates a base collection with every
// PocketBase field type, a reserved name and pre-0.23 rules.
func TestTranslateBaseAllTypes(t *testing.T) {
	out, ps, err := Translate(load(t, "base_posts.json"), names{"_pb_users_auth_": "users"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != "files_pb" || !out.Renamed || out.Original != "files" || !hasProblem(ps, "name", "files_pb") {
		t.Fatalf("reserved name: %s renamed=%v problems=%v", out.Name, out.Renamed, ps)
	}
	var got []string
	for _, f := range out.Fields {
		got = append(got, f.Name())
	}
	wantNames := []string{"title", "slug", "views", "published", "date", "tags", "author", "images", "meta", "body", "link", "place", "published_at"}
	if !reflect.DeepEqual(got, wantNames) {
		t.Fatalf("fields = %v, want %v", got, wantNames)
	}
	checks := []struct {
		field string
		want  Field
	}{
		{"title", Field{"name": "title", "type": "text", "required": true, "hidden": false, "min": 3.0, "max": 200.0}},
		{"slug", Field{"name": "slug", "type": "text", "required": false, "hidden": false, "pattern": "^[a-z-]+$", "unique": true}},
		{"views", Field{"name": "views", "type": "number", "required": false, "hidden": false, "min": 0.0, "integer": true}},
		{"date", Field{"name": "date", "type": "date", "required": false, "hidden": false, "min": 1577881800.0, "max": 1893456000.0}},
		{"tags", Field{"name": "tags", "type": "select", "required": false, "hidden": false, "values": []string{"go", "js", "sql"}, "multiple": true, "max_select": 3}},
		{"author", Field{"name": "author", "type": "relation", "required": true, "hidden": false, "collection": "users", "cascade": true}},
		{"images", Field{"name": "images", "type": "file", "required": false, "hidden": false, "multiple": true, "maxSize": int64(5242880), "mimeTypes": []string{"image/png", "image/jpeg"}, "protected": true}},
		{"meta", Field{"name": "meta", "type": "json", "required": false, "hidden": true, "max_size": int64(2000000)}},
		{"body", Field{"name": "body", "type": "editor", "required": false, "hidden": false, "max": 10000.0}},
		{"link", Field{"name": "link", "type": "url", "required": false, "hidden": false, "domains_except": []string{"example.com"}}},
		{"place", Field{"name": "place", "type": "geoPoint", "required": false, "hidden": false}},
		{"published_at", Field{"name": "published_at", "type": "autodate", "required": false, "hidden": false, "on_create": false, "on_update": true}},
	}
	for _, c := range checks {
		if f := fieldByName(out.Collection, c.field); !reflect.DeepEqual(f, c.want) {
			t.Errorf("%s = %#v\nwant %#v", c.field, f, c.want)
		}
	}
	if !reflect.DeepEqual(out.Indexes, []Index{{Field: "views"}}) {
		t.Errorf("indexes = %v, want the plain views index (slug's is the unique flag)", out.Indexes)
	}
	if !reflect.DeepEqual(out.Thumbs, map[string][]string{"images": {"100x100", "0x300"}}) {
		t.Errorf("thumbs = %v", out.Thumbs)
	}
	if out.ViewRule == nil || *out.ViewRule != "" {
		t.Errorf("view_rule = %v, want public", out.ViewRule)
	}
	if out.CreateRule == nil || *out.CreateRule != "@request.auth.id != '' && @request.body.author = @request.auth.id" {
		t.Errorf("create_rule = %v", deref(out.CreateRule))
	}
	if out.UpdateRule == nil || *out.UpdateRule != "author = @request.auth.id && @request.auth.email_verified = true" {
		t.Errorf("update_rule = %v", deref(out.UpdateRule))
	}
	for _, w := range []struct{ where, sub string }{
		{"fields.slug.autogeneratePattern", "[a-z]{8}"},
		{"fields.body.maxSize", "characters"},
		{"fields.body.convertURLs", "lost"},
		{"fields.images.maxSelect", "no count limit"},
		{"indexes[2]", "composite"},
		{"createRule", "@request.body"},
	} {
		if !hasProblem(ps, w.where, w.sub) {
			t.Errorf("no problem %s ~ %q in %v", w.where, w.sub, ps)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestTranslateRefusesSystemCollections(t *testing.T) {
	for _, n := range []string{"_superusers", "_mfas", "_otps", "_externalAuths", "_authOrigins"} {
		if _, _, err := Translate(PBCollection{Name: n, Type: "base"}, nil); err == nil {
			t.Errorf("%s translated", n)
		}
	}
	if _, _, err := Translate(PBCollection{Name: "x", Type: "graph"}, nil); err == nil {
		t.Errorf("unknown type translated")
	}
}

func TestTranslateRenamesReservedFields(t *testing.T) {
	pb := PBCollection{Name: "members", Type: "auth", Fields: []PBField{
		{Name: "is_anonymous", Type: "bool"},
		{Name: "created", Type: "text"},
		{Name: "tokenKey", Type: "text", System: true},
	}}
	out, ps, err := Translate(pb, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range out.Fields {
		got = append(got, f.Name())
	}
	if !reflect.DeepEqual(got, []string{"is_anonymous_pb", "created_pb", "emailVisibility"}) {
		t.Fatalf("fields = %v", got)
	}
	if !hasProblem(ps, "fields.is_anonymous.name", "is_anonymous_pb") || !hasProblem(ps, "fields.created.name", "created_pb") {
		t.Fatalf("renames not reported: %v", ps)
	}
}

func TestCollectionName(t *testing.T) {
	for in, want := range map[string]string{
		"posts": "posts", "Files": "Files_pb", "collections": "collections_pb", "svc_x": "pbsvc_x_pb",
		"_svcthing": "pb_svcthing_pb", "sqlite_a": "pbsqlite_a_pb", "my-coll": "my_coll_pb", "9lives": "c_9lives_pb",
		strings.Repeat("a", 70): strings.Repeat("a", 60) + "_pb",
	} {
		got, renamed := CollectionName(in)
		if got != want || renamed != (in != want) {
			t.Errorf("CollectionName(%q) = %q, %v; want %q", in, got, renamed, want)
		}
		if !namePattern.MatchString(got) {
			t.Errorf("%q is not a valid svcd name", got)
		}
	}
}

func TestViewRule(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		list, view *string
		want       *string
		problem    bool
	}{
		{nil, nil, nil, false},
		{s(""), s(""), s(""), false},
		{s("a = 1"), s("a = 1"), s("a = 1"), false},
		{s("a = 1"), nil, nil, true},
		{nil, s(""), nil, true},
		{s(""), s("b = 2"), s("b = 2"), true},
		{s("a = 1"), s(""), s("a = 1"), true},
		{s("a = 1"), s("b = 2"), s("(a = 1) && (b = 2)"), true},
	} {
		got, ps := ViewRule(c.list, c.view)
		if deref(got) != deref(c.want) || (got == nil) != (c.want == nil) || (len(ps) > 0) != c.problem {
			t.Errorf("ViewRule(%s, %s) = %s %v; want %s problem=%v", deref(c.list), deref(c.view), deref(got), ps, deref(c.want), c.problem)
		}
	}
}

func TestParseIndex(t *testing.T) {
	for _, c := range []struct {
		sql    string
		want   ParsedIndex
		broken bool
	}{
		{"CREATE UNIQUE INDEX `idx_a` ON `posts` (`slug`)", ParsedIndex{Name: "idx_a", Unique: true, Columns: []string{"slug"}}, false},
		{"create index test on new_name (id)", ParsedIndex{Name: "test", Columns: []string{"id"}}, false},
		{"CREATE INDEX IF NOT EXISTS idx_b ON posts (title COLLATE NOCASE DESC, views)", ParsedIndex{Name: "idx_b", Columns: []string{"title", "views"}, Collate: true}, false},
		{"CREATE UNIQUE INDEX `idx_email_x` ON `users` (`email`) WHERE `email` != ''", ParsedIndex{Name: "idx_email_x", Unique: true, Columns: []string{"email"}, Where: "WHERE `email` != ''"}, false},
		{"CREATE INDEX idx_c ON posts (lower(title))", ParsedIndex{Name: "idx_c"}, false},
		{"DROP TABLE posts", ParsedIndex{}, true},
	} {
		got, err := ParseIndex(c.sql)
		if (err != nil) != c.broken || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseIndex(%q) = %+v, %v; want %+v", c.sql, got, err, c.want)
		}
	}
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]int64{
		"2024-01-02 03:04:05.678Z": 1704164645,
		"2024-01-02 03:04:05Z":     1704164645,
		"2024-01-02T03:04:05Z":     1704164645,
		"2024-01-02":               1704153600,
	} {
		if got, err := ParseDate(in); err != nil || got.Unix() != want {
			t.Errorf("ParseDate(%q) = %v, %v; want %d", in, got, err, want)
		}
	}
	if got, err := ParseDate("2024-01-02 03:04:05.678Z"); err != nil || got.Nanosecond() != 678e6 {
		t.Errorf("ParseDate dropped the milliseconds: %v, %v", got, err)
	}
	if FormatDate(1704164645) != "2024-01-02 03:04:05.000Z" {
		t.Errorf("FormatDate = %s", FormatDate(1704164645))
	}
	if _, err := ParseDate("yesterday"); err == nil {
		t.Errorf("ParseDate accepted yesterday")
	}
}

// TestReverseKeySets holds Reverse's fields to the members PocketBase's
// field types marshal (pb:core/field_*.go, every member without omitempty).
func TestReverseKeySets(t *testing.T) {
	tr, _, err := Translate(load(t, "base_posts.json"), names{"_pb_users_auth_": "users"})
	if err != nil {
		t.Fatal(err)
	}
	s := Stored{ID: "col_abc", Collection: tr.Collection, Created: 1704164645, Updated: 1704164645}
	out := Reverse(s, tr.Indexes)
	common := []string{"help", "hidden", "id", "name", "presentable", "system", "type"}
	want := map[string][]string{
		"text":     {"autogeneratePattern", "max", "min", "pattern", "primaryKey", "required"},
		"number":   {"max", "min", "onlyInt", "required"},
		"bool":     {"required"},
		"url":      {"exceptDomains", "onlyDomains", "required"},
		"editor":   {"convertURLs", "maxSize", "required"},
		"date":     {"max", "min", "required"},
		"select":   {"maxSelect", "required", "values"},
		"file":     {"maxSelect", "maxSize", "mimeTypes", "protected", "required", "thumbs"},
		"relation": {"cascadeDelete", "collectionId", "maxSelect", "minSelect", "required"},
		"json":     {"maxSize", "required"},
		"geoPoint": {"required"},
	}
	seen := map[string]bool{}
	for _, f := range out["fields"].([]map[string]any) {
		typ := f["type"].(string)
		seen[typ] = true
		exp := append([]string{}, common...)
		if typ == "autodate" {
			exp = []string{"hidden", "id", "name", "onCreate", "onUpdate", "presentable", "system", "type"}
		} else {
			exp = append(exp, want[typ]...)
		}
		sort.Strings(exp)
		var keys []string
		for k := range f {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !reflect.DeepEqual(keys, exp) {
			t.Errorf("%s (%s) keys = %v\nwant %v", f["name"], typ, keys, exp)
		}
	}
	if len(seen) != len(want)+1 {
		t.Errorf("types seen %v", seen)
	}
	for _, k := range []string{"id", "name", "type", "system", "fields", "indexes", "listRule", "viewRule", "createRule", "updateRule", "deleteRule", "created", "updated"} {
		if _, ok := out[k]; !ok {
			t.Errorf("collection member %s missing", k)
		}
	}
	if out["created"] != "2024-01-02 03:04:05.000Z" {
		t.Errorf("created = %v", out["created"])
	}
	idx := out["indexes"].([]string)
	if len(idx) != 2 || !strings.Contains(idx[0]+idx[1], "CREATE UNIQUE INDEX `uniq_files_pb_slug`") || !strings.Contains(idx[0]+idx[1], "CREATE INDEX `idx_files_pb_views`") {
		t.Errorf("indexes = %v", idx)
	}
}

// TestReverseRoundTrip translates back what Reverse made and finds the
// same svcd definition.
func TestReverseRoundTrip(t *testing.T) {
	for _, file := range []string{"base_posts.json", "auth_new_name.json"} {
		tr, _, err := Translate(load(t, file), names{"_pb_users_auth_": "users", "users": "users"})
		if err != nil {
			t.Fatal(err)
		}
		rev := Reverse(Stored{ID: "col_x", Collection: tr.Collection}, tr.Indexes)
		b, _ := json.Marshal(rev)
		var pb PBCollection
		if err := json.Unmarshal(b, &pb); err != nil {
			t.Fatal(err)
		}
		pb.Name = tr.Name
		back, _, err := Translate(pb, names{"users": "users"})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(tr.Collection)
		z, _ := json.Marshal(back.Collection)
		if string(a) != string(z) {
			t.Errorf("%s round trip:\n%s\n%s", file, a, z)
		}
		if !reflect.DeepEqual(tr.Indexes, back.Indexes) {
			t.Errorf("%s indexes %v != %v", file, tr.Indexes, back.Indexes)
		}
	}
}
