package search

import (
	"database/sql"
	"math"
	"strconv"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"svcd/engine"
)

// FuzzSearchTerms: whatever is typed, the terms are at most 32 words
// without white space, and their FTS5 query is never FTS syntax: SQLite
// accepts it as a MATCH argument (no error) on an index like ours.
func FuzzSearchTerms(f *testing.F) {
	for _, s := range []string{"", "café crème", `"AND" OR NOT`, `a "b c" d`, "NEAR(a b)", "{c0}: x", "x*", "^x", "-x +y",
		strings.Repeat("w ", 40), "\"\"\"", "col:term", "a\x00b", "日本語 テキスト", "\u0301\u0301", "( ) : * ^ + -"} {
		f.Add(s)
	}
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE VIRTUAL TABLE t USING fts5(c0, c1, z, content='', contentless_delete=1, " + ftsTokenizer + ")"); err != nil {
		f.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t (rowid, c0, c1, z) VALUES (1, 'cafe creme and or not near', 'x y', 'z')"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		terms := SearchTerms(q)
		if len(terms) > MaxSearchTerms {
			t.Fatalf("%d terms", len(terms))
		}
		for _, term := range terms {
			if term == "" || strings.IndexFunc(term, isTermSeparator) >= 0 {
				t.Fatalf("bad term %q", term)
			}
			if !strings.Contains(q, term) {
				t.Fatalf("term %q not in the query", term)
			}
		}
		if len(terms) == 0 {
			return
		}
		for _, cols := range [][]string{{"c0"}, {"c0", "c1"}} {
			m := ftsMatch(terms, cols)
			rows, err := db.Query("SELECT rowid FROM t WHERE t MATCH ?", m)
			if err != nil {
				t.Fatalf("MATCH %q from %q: %v", m, q, err)
			}
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("MATCH %q from %q: %v", m, q, err)
			}
			rows.Close()
		}
	})
}

// FuzzParseNearVector: a vector parses to 1-4096 finite float32s, and
// writing it back as a comma list or a JSON array reads the same vector.
func FuzzParseNearVector(f *testing.F) {
	for _, s := range []string{"[1,0,0]", "1,0,0", " [ 0.5 , -2e3 ] ", "1e39", "NaN", "Inf,1", "[1,null]", "[]", "", ",", "0x1p3",
		"1_000", "[1,2]x", `["1"]`, "-0", "+1,.5,5.", "[1e-45]", "3.4028235e38"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vec, err := ParseNearVector(s)
		if err != nil {
			if engine.AsError(err) == nil || engine.AsError(err).Kind != engine.KindValidation {
				t.Fatalf("%q: error %v is not a validation error", s, err)
			}
			return
		}
		if len(vec) == 0 || len(vec) > maxVectorLen {
			t.Fatalf("%q: %d elements", s, len(vec))
		}
		parts := make([]string, len(vec))
		for i, v := range vec {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%q: element %d is %v", s, i, v)
			}
			parts[i] = strconv.FormatFloat(float64(v), 'g', -1, 32)
		}
		for _, again := range []string{strings.Join(parts, ","), "[" + strings.Join(parts, ",") + "]"} {
			back, err := ParseNearVector(again)
			if err != nil || len(back) != len(vec) {
				t.Fatalf("%q -> %q: %v", s, again, err)
			}
			for i := range vec {
				if back[i] != vec[i] {
					t.Fatalf("%q -> %q: element %d %v != %v", s, again, i, back[i], vec[i])
				}
			}
		}
	})
}
