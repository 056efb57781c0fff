package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// csvFields is one field of every type of engine/schema.
func csvFields() []map[string]any {
	return []map[string]any{
		f("title", "text", "unique", true),
		f("email", "email"),
		f("site", "url"),
		f("body", "editor"),
		f("meta", "json"),
		f("place", "geoPoint"),
		f("size", "select", "values", []string{"s", "m", "l"}),
		f("tags", "select", "values", []string{"a", "b", "c"}, "multiple", true),
		f("doc", "file"),
		f("owner", "relation", "collection", "people"),
		f("team", "relation", "collection", "people", "multiple", true),
		f("done", "bool"),
		f("due", "date"),
		f("made", "autodate", "on_create", true),
		f("secret", "password"),
		f("score", "number"),
		f("emb", "vector", "dimensions", 3),
	}
}

// exportCSV fetches the export of c as the admin and parses it.
func exportCSV(t *testing.T, s *apitest.Server, c string) (*http.Response, [][]string) {
	t.Helper()
	res, body := s.AdminDo(t, http.MethodGet, "/api/v1/admin/export/"+c, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export %s: %d %s", c, res.StatusCode, body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("export %s is not CSV: %v\n%s", c, err, body)
	}
	return res, rows
}

// importCSV posts body to the import of c as the admin and returns the
// status and the decoded answer.
func importCSV(t *testing.T, s *apitest.Server, c, body string) (int, map[string]any) {
	t.Helper()
	res, out := s.Do(t, http.MethodPost, "/api/v1/admin/import/"+c, body, s.AdminHeaders(t, map[string]string{"Content-Type": "text/csv"}))
	apitest.CheckCommon(t, res, out)
	return res.StatusCode, apitest.DecodeMap(t, out)
}

// importOK imports body and returns the data of a 200 answer.
func importOK(t *testing.T, s *apitest.Server, c, body string) map[string]any {
	t.Helper()
	status, out := importCSV(t, s, c, body)
	if status != http.StatusOK {
		t.Fatalf("import into %s: %d %v", c, status, out)
	}
	return apitest.Obj(t, out["data"])
}

// recordsBy lists every record of c keyed by its title.
func recordsBy(t *testing.T, s *apitest.Server, c string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, x := range apitest.List(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/"+c+"?perPage=500", nil)["data"]) {
		r := apitest.Obj(t, x)
		out[fmt.Sprint(r["title"])] = r
	}
	return out
}

// TestCSVRoundTrip: an export of records holding every field type, imported
// into a collection of the same schema, gives the same values (autodate,
// password and file excepted, as documented), and its own export is the
// same CSV but for ids and times.
func TestCSVRoundTrip(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("people", "base", []map[string]any{f("name", "text")}))
	p1 := s.CreateRecord(t, "people", map[string]any{"name": "ann"})["id"]
	p2 := s.CreateRecord(t, "people", map[string]any{"name": "bob"})["id"]
	s.CreateCollection(t, coll("things", "base", csvFields()))
	s.CreateCollection(t, coll("copies", "base", csvFields()))

	full := map[string]any{
		"title": "full", "email": "a@example.com", "site": "https://example.com/x?a=1&b=2",
		"body": "<p>line one,\n\"quoted\" line two</p>", "meta": map[string]any{"k": []any{1, "two", nil, true}, "n": 1.5},
		"place": map[string]any{"lon": 12.5, "lat": -41.25}, "size": "m", "tags": []string{"a", "c"},
		"owner": p1, "team": []any{p1, p2}, "done": true, "due": 1700000000, "secret": "hunter2-hunter2",
		"score": -3.75, "emb": []float64{0.5, -1, 2.25},
	}
	strs := map[string]any{"title": "json string, unicode é✓", "meta": "just a string", "score": 1e21, "due": 0}
	empty := map[string]any{"title": "empty"}
	zeros := map[string]any{"title": "zeros", "meta": []any{}, "tags": []string{}, "team": []any{}, "done": false, "score": 0, "body": ""}
	for _, r := range []map[string]any{full, strs, empty, zeros} {
		s.CreateRecord(t, "things", r)
	}

	res, rows := exportCSV(t, s, "things")
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := res.Header.Get("Content-Disposition"); cd != `attachment; filename=things.csv` {
		t.Errorf("Content-Disposition %q", cd)
	}
	wantHeader := []string{"id", "created", "updated", "title", "email", "site", "body", "meta", "place", "size", "tags",
		"doc", "owner", "team", "done", "due", "score", "emb"}
	if !reflect.DeepEqual(rows[0], wantHeader) {
		t.Fatalf("header %q, want %q", rows[0], wantHeader)
	}
	if len(rows) != 5 {
		t.Fatalf("export has %d rows, want header and 4 records", len(rows))
	}
	byTitle := map[string][]string{}
	for _, r := range rows[1:] {
		byTitle[r[3]] = r
	}
	col := func(title, name string) string {
		for i, h := range wantHeader {
			if h == name {
				return byTitle[title][i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	// SPEC.md's encodings: nulls empty, objects and arrays as JSON text,
	// strings as their text.
	for _, c := range []struct{ title, name, want string }{
		{"full", "meta", `{"k":[1,"two",null,true],"n":1.5}`},
		{"full", "place", `{"lon":12.5,"lat":-41.25}`},
		{"full", "tags", `["a","c"]`},
		{"full", "team", fmt.Sprintf(`[%q,%q]`, p1, p2)},
		{"full", "owner", p1.(string)},
		{"full", "body", "<p>line one,\n\"quoted\" line two</p>"},
		{"full", "done", "true"},
		{"full", "due", "1700000000"},
		{"full", "emb", "[0.5,-1,2.25]"},
		{"full", "doc", ""},
		{"json string, unicode é✓", "meta", `"just a string"`},
		{"empty", "meta", ""},
		{"empty", "owner", ""},
		{"empty", "score", ""},
		{"zeros", "done", "false"},
		{"zeros", "score", "0"},
	} {
		if got := col(c.title, c.name); got != c.want {
			t.Errorf("%s.%s = %q, want %q", c.title, c.name, got, c.want)
		}
	}

	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.WriteAll(rows)
	data := importOK(t, s, "copies", buf.String())
	if !counts(t, data, 4, 0, 4) || len(apitest.List(t, data["errors"])) != 0 {
		t.Fatalf("import answer %v", data)
	}

	orig, copies := recordsBy(t, s, "things"), recordsBy(t, s, "copies")
	for title, o := range orig {
		c, ok := copies[title]
		if !ok {
			t.Errorf("record %q not imported", title)
			continue
		}
		if c["id"] == o["id"] {
			t.Errorf("%q: the import kept the exported id %v (ids are ignored)", title, o["id"])
		}
		for k, v := range o {
			switch k {
			case "id", "created", "updated", "made", "collectionId", "collectionName":
				continue
			}
			// CSV has one empty cell for null and "": an empty text
			// comes back as null (docs/api.md).
			if v == "" && c[k] == nil {
				continue
			}
			if !reflect.DeepEqual(c[k], v) {
				t.Errorf("%q.%s: imported %#v, exported %#v", title, k, c[k], v)
			}
		}
		if _, ok := c["secret"]; ok {
			t.Errorf("%q: password field returned", title)
		}
	}

	// The copy's export is the same CSV but for id, created and updated.
	_, again := exportCSV(t, s, "copies")
	strip := func(rows [][]string) map[string][]string {
		m := map[string][]string{}
		for _, r := range rows[1:] {
			m[r[3]] = r[3:]
		}
		return m
	}
	if a, b := strip(rows), strip(again); !reflect.DeepEqual(a, b) {
		t.Errorf("export of the import differs:\n%q\n%q", a, b)
	}
}

// TestCSVImportErrors: every row is validated as a create; rows that fail
// (validation at the proposer, a unique clash found at apply time, a
// wrong cell count) are reported with their 1-based row number (header =
// 1) and do not stop the valid rows of their chunk.
func TestCSVImportErrors(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("items", "base", []map[string]any{
		f("title", "text", "required", true, "unique", true), f("n", "number", "max", 10), f("meta", "json"),
	}))
	s.CreateRecord(t, "items", map[string]any{"title": "taken"})

	body := "id,title,n,unknown,created\n" + // unknown columns and id/created are skipped
		"zzzzzzzzzzzzzzz,one,1,x,5\n" + // row 2: ok; its id is not used
		",,2,x,\n" + // row 3: required title
		"x,two,11,x,\n" + // row 4: n over max
		"x,taken,3,x,\n" + // row 5: unique clash with an existing record (apply time)
		"x,three,3\n" + // row 6: wrong cell count
		"x,one,4,x,\n" + // row 7: unique clash with row 2 of the same chunk (apply time)
		"x,\"four, with comma\",4,x,\n" // row 8: ok
	data := importOK(t, s, "items", body)
	if !counts(t, data, 2, 5, 7) {
		t.Fatalf("counts: %v", data)
	}
	got := map[int]map[string]any{}
	var order []int
	for _, x := range apitest.List(t, data["errors"]) {
		e := apitest.Obj(t, x)
		row := int(apitest.Int(t, e["row"]))
		order = append(order, row)
		got[row] = apitest.Obj(t, e["details"])
	}
	if !reflect.DeepEqual(order, []int{3, 4, 5, 6, 7}) {
		t.Fatalf("error rows %v, want [3 4 5 6 7]: %v", order, data["errors"])
	}
	for row, key := range map[int]string{3: "title", 4: "n", 5: "title", 6: "_row", 7: "title"} {
		if _, ok := got[row][key]; !ok {
			t.Errorf("row %d: details %v, want key %q", row, got[row], key)
		}
	}
	recs := recordsBy(t, s, "items")
	if len(recs) != 3 || recs["one"] == nil || recs["four, with comma"] == nil {
		t.Errorf("records after import: %v", recs)
	}
	if recs["one"]["id"] == "zzzzzzzzzzzzzzz" {
		t.Errorf("the id column was used")
	}

	// Errors are capped at 50; failed counts all of them. 230 rows span
	// three chunks.
	var b strings.Builder
	b.WriteString("title,n,meta\n")
	for i := 0; i < 230; i++ {
		switch {
		case i%3 == 0:
			fmt.Fprintf(&b, "bulk%d,99,\n", i) // over max
		case i%3 == 1:
			fmt.Fprintf(&b, "bulk%d,1,{not json\n", i)
		default:
			fmt.Fprintf(&b, "bulk%d,1,\"{\"\"i\"\":%d}\"\n", i, i)
		}
	}
	data = importOK(t, s, "items", b.String())
	errs := apitest.List(t, data["errors"])
	if !counts(t, data, 76, 154, 230) || len(errs) != 50 {
		t.Fatalf("bulk counts: total %v failed %v created %v errors %d", data["total"], data["failed"], data["created"], len(errs))
	}
	if first := apitest.Obj(t, errs[0]); apitest.Int(t, first["row"]) != 2 || apitest.Obj(t, first["details"])["n"] == nil {
		t.Errorf("first error %v", first)
	}
	if second := apitest.Obj(t, errs[1]); apitest.Obj(t, second["details"])["meta"] != "must be valid JSON" {
		t.Errorf("second error %v", second)
	}
	var meta map[string]any
	if r := recordsBy(t, s, "items")["bulk2"]; r == nil || json.Unmarshal(mustJSON(t, r["meta"]), &meta) != nil || meta["i"] != float64(2) {
		t.Errorf("bulk2 after import: %v", r)
	}

	// A row's error names every bad field: cells that do not decode and
	// what validation says of the others.
	data = importOK(t, s, "items", "title,n,meta\n,11,{bad\n")
	if errs := apitest.List(t, data["errors"]); len(errs) != 1 {
		t.Errorf("one bad row: %v", data)
	} else if d := apitest.Obj(t, apitest.Obj(t, errs[0])["details"]); len(d) != 3 || d["meta"] != "must be valid JSON" || d["title"] == nil || d["n"] == nil {
		t.Errorf("details of a row bad in three fields: %v", d)
	}

	// A CSV syntax error fails its row and ends the import there.
	data = importOK(t, s, "items", "title\nfive\n\"six\n")
	if !counts(t, data, 1, 1, 2) {
		t.Errorf("syntax error: %v", data)
	}
}

// counts reports whether an import answer has these created, failed and
// total counts.
func counts(t *testing.T, data map[string]any, created, failed, total int64) bool {
	t.Helper()
	return apitest.Int(t, data["created"]) == created && apitest.Int(t, data["failed"]) == failed && apitest.Int(t, data["total"]) == total
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCSVRoutes: base collections only (422), 404 for none, an empty body
// or a doubled column is a 422 with nothing created, over-size 413,
// editors and above only, and the audit log records an import.
func TestCSVRoutes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text")}))
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("v", "view", nil, "view_query", "SELECT id, title FROM notes"))
	_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
	_, editor := newAdmin(t, s, "editor@example.com", "editor")

	scenarios := []apitest.Scenario{
		{Name: "export of a view", Method: "GET", URL: "/api/v1/admin/export/v", Admin: true, ExpectedStatus: 422},
		{Name: "export of an auth collection", Method: "GET", URL: "/api/v1/admin/export/users", Admin: true, ExpectedStatus: 422},
		{Name: "import into a view", Method: "POST", URL: "/api/v1/admin/import/v", Admin: true, Body: "title\nx\n", ExpectedStatus: 422},
		{Name: "import into an auth collection", Method: "POST", URL: "/api/v1/admin/import/users", Admin: true, Body: "email\nx@example.com\n", ExpectedStatus: 422},
		{Name: "export of no collection", Method: "GET", URL: "/api/v1/admin/export/nope", Admin: true, ExpectedStatus: 404},
		{Name: "import into no collection", Method: "POST", URL: "/api/v1/admin/import/nope", Admin: true, Body: "title\n", ExpectedStatus: 404},
		{Name: "empty body", Method: "POST", URL: "/api/v1/admin/import/notes", Admin: true, Body: "", ExpectedStatus: 422,
			ExpectedContent: []string{"header row"}},
		{Name: "a column twice", Method: "POST", URL: "/api/v1/admin/import/notes", Admin: true, Body: "title,title\na,b\n", ExpectedStatus: 422},
		{Name: "no token", Method: "GET", URL: "/api/v1/admin/export/notes", ExpectedStatus: 401},
		{Name: "viewer export", Method: "GET", URL: "/api/v1/admin/export/notes", Headers: bearer(viewer), ExpectedStatus: 403},
		{Name: "viewer import", Method: "POST", URL: "/api/v1/admin/import/notes", Headers: bearer(viewer), Body: "title\nx\n", ExpectedStatus: 403},
		{Name: "editor export", Method: "GET", URL: "/api/v1/admin/export/notes", Headers: bearer(editor), ExpectedStatus: 200,
			ExpectedContent: []string{"id,created,updated,title"}},
		{Name: "editor import", Method: "POST", URL: "/api/v1/admin/import/notes", Headers: bearer(editor), Body: "title\nby editor\n",
			ExpectedStatus: 200, ExpectedContent: []string{`"created":1`}},
	}
	apitest.Run(t, s, scenarios)
	if n := countRecords(t, s, "notes"); n != 1 {
		t.Errorf("notes has %d records, want the editor's one", n)
	}

	// Over the body limit: 413, nothing created.
	big := "title\n" + strings.Repeat("x\n", 32<<20+1)
	if status, out := importCSV(t, s, "notes", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("64 MiB+ body: %d %v", status, out)
	}
	if n := countRecords(t, s, "notes"); n != 1 {
		t.Errorf("notes has %d records after the refused import", n)
	}

	body := must(t, s, "GET", "/api/v1/admin/audit-log?perPage=50", s.AdminHeaders(t, nil))
	found := false
	for _, x := range apitest.List(t, apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["data"]) {
		m := apitest.Obj(t, x)
		if m["action"] == "import.create" && m["target"] == "notes" && m["actor_email"] == "editor@example.com" && fmt.Sprint(m["status"]) == "200" {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit entry for the editor's import: %s", body)
	}
}
