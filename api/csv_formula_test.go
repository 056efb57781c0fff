package api_test

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"reflect"
	"testing"

	"svcd/api/apitest"
)

// TestCSVFormulaInjection: a text a spreadsheet would run as a formula
// (it starts with =, +, -, @, a tab or a carriage return) is exported
// behind a `'`; a text that really starts with `'` before such a character
// gets one more; numbers and JSON keep their minus sign. Importing the
// export gives back exactly the stored values, and exporting the import
// gives the same cells.
func TestCSVFormulaInjection(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	fields := func() []map[string]any {
		return []map[string]any{
			f("title", "text"), f("note", "text"), f("n", "number"), f("j", "json"),
			f("tags", "select", "values", []string{"-", "@a", "b"}, "multiple", true),
			f("one", "select", "values", []string{"-", "@a", "b"}),
		}
	}
	s.CreateCollection(t, coll("sheet", "base", fields()))
	s.CreateCollection(t, coll("copy", "base", fields()))
	for _, r := range []map[string]any{
		{"title": `=HYPERLINK("http://evil.example","x")`, "note": "'=already quoted", "n": -5, "j": -5, "tags": []string{"-"}, "one": "@a"},
		{"title": "@SUM(A1:A9)", "note": "+1", "n": 3, "j": "=1", "one": "-"},
		{"title": "-dash", "note": "\t=tab", "j": []any{"=x"}},
		{"title": "\r=cr", "note": "''+two quotes"},
		{"title": "plain", "note": "'just a quote", "one": "b"},
	} {
		s.CreateRecord(t, "sheet", r)
	}

	_, rows := exportCSV(t, s, "sheet")
	// header: id, created, updated, title, note, n, j, tags, one
	cells := map[string][]string{}
	for _, r := range rows[1:] {
		cells[r[3]] = r[3:]
	}
	want := map[string][]string{
		`'=HYPERLINK("http://evil.example","x")`: {`'=HYPERLINK("http://evil.example","x")`, "''=already quoted", "-5", "-5", `["-"]`, "'@a"},
		"'@SUM(A1:A9)":                           {"'@SUM(A1:A9)", "'+1", "3", `"=1"`, "[]", "'-"},
		"'-dash":                                 {"'-dash", "'\t=tab", "", `["=x"]`, "[]", ""},
		"'\r=cr":                                 {"'\r=cr", "'''+two quotes", "", "", "[]", ""},
		"plain":                                  {"plain", "'just a quote", "", "", "[]", "b"},
	}
	if !reflect.DeepEqual(cells, want) {
		t.Fatalf("export cells:\n got %q\nwant %q", cells, want)
	}

	var buf bytes.Buffer
	if err := csv.NewWriter(&buf).WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	data := importOK(t, s, "copy", buf.String())
	if !counts(t, data, 5, 0, 5) {
		t.Fatalf("import answer %v", data)
	}
	orig, copies := recordsBy(t, s, "sheet"), recordsBy(t, s, "copy")
	if len(copies) != len(orig) {
		t.Fatalf("imported %d records, want %d", len(copies), len(orig))
	}
	for title, o := range orig {
		c, ok := copies[title]
		if !ok {
			t.Errorf("record %q not imported (the escape was not undone)", title)
			continue
		}
		for _, k := range []string{"title", "note", "n", "j", "tags", "one"} {
			if !reflect.DeepEqual(c[k], o[k]) {
				t.Errorf("%q.%s: imported %#v, exported %#v", title, k, c[k], o[k])
			}
		}
	}
	_, again := exportCSV(t, s, "copy")
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

	// A hand-written cell with the guard before a number reads as the
	// number; a quote before anything else is part of the text.
	s.CreateCollection(t, coll("hand", "base", fields()))
	if data := importOK(t, s, "hand", "title,n,note\n'-7,'-7,'abc\n"); !counts(t, data, 1, 0, 1) {
		t.Fatalf("import answer %v", data)
	}
	r := recordsBy(t, s, "hand")["-7"]
	if r == nil || apitest.Int(t, r["n"]) != -7 || r["note"] != "'abc" {
		t.Errorf("hand-written cells imported as %v", r)
	}
	res, body := s.AdminDo(t, http.MethodGet, "/api/v1/admin/export/hand", nil)
	if res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("'-7,'abc,-7,")) {
		t.Errorf("export of hand: %d %s", res.StatusCode, body)
	}
}
