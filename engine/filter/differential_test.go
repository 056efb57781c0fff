package filter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"svcd/engine/schema"
	"svcd/fsm"
)

// testColl is the collection the differential tests run against.
func testColl() *Collection {
	return &Collection{ID: "col_t", Name: "t", Fields: []*FieldDef{
		{Name: "id", Type: "id"},
		{Name: "created", Type: "date_system"},
		{Name: "updated", Type: "date_system"},
		{Name: "title", Type: schema.FieldText},
		{Name: "body", Type: schema.FieldEditor},
		{Name: "n", Type: schema.FieldNumber},
		{Name: "flag", Type: schema.FieldBool},
		{Name: "d", Type: schema.FieldDate},
		{Name: "tags", Type: schema.FieldSelect, Multiple: true},
		{Name: "meta", Type: schema.FieldJSON},
		{Name: "geo", Type: schema.FieldGeoPoint},
		{Name: "secret", Type: schema.FieldText, Hidden: true},
	}}
}

type oneColl struct{ c *Collection }

func (o oneColl) FilterCollection(name string) *Collection {
	if name == o.c.Name || name == o.c.ID {
		return o.c
	}
	return nil
}

var (
	texts   = []any{nil, "", "a", "A", "abc", "ABC", "Hello world", "héllo", "50%", "a_b", `back\slash`, "5", "10", "2.5", "true", "x%y", "ü"}
	numbers = []any{nil, 0.0, 1.0, -1.0, 5.0, 10.0, 2.5, 1e10, -0.5}
	tagSets = []any{nil, "[]", `["a"]`, `["a","b"]`, `["b","c"]`, `["c"]`, `["A","a"]`}
	metas   = []any{nil, "null", "1", `"x"`, "[]", `[1,"2",true,null]`, `{"a":1,"b":"x","c":[1,2,3],"d":{"e":5}}`,
		`{"a":"1","b":null,"c":[],"d":{"e":"5"}}`, `{"a":2.5,"c":["a","b"],"d":[{"e":1}]}`, `{"b":"X","c":"abc"}`, "true"}
	geos = []any{nil, `{"lon":0,"lat":0}`, `{"lon":13.4,"lat":52.5}`, `{"lon":-74,"lat":40.7}`, `{"lon":2.35,"lat":48.85}`}
)

func pick(r *rand.Rand, xs []any) any { return xs[r.IntN(len(xs))] }

func randomRecords(r *rand.Rand, n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		d := any(nil)
		if r.IntN(4) > 0 {
			d = int64(1700000000 + r.IntN(5)*86400*40)
		}
		flag := int64(r.IntN(2))
		recs[i] = Record{
			"id": fmt.Sprintf("r%014d", i), "created": int64(1700000000 + i), "updated": int64(1700000000 + i),
			"title": pick(r, texts), "body": pick(r, texts), "n": pick(r, numbers), "flag": flag,
			"d": d, "tags": pick(r, tagSets), "meta": pick(r, metas), "geo": pick(r, geos), "secret": pick(r, texts),
		}
	}
	return recs
}

// openTable creates table t holding recs in a real state machine (so the
// SQL functions are registered) and returns a query runner.
func openTable(t testing.TB, recs []Record) func(where string, args []any) ([]string, error) {
	t.Helper()
	reg := fsm.NewRegistry()
	reg.Register(1, "setup", func(tx *fsm.Tx, _ fsm.Command) (any, error) {
		if _, err := tx.ExecDirect(`CREATE TABLE t (id TEXT PRIMARY KEY, created INTEGER, updated INTEGER, title TEXT,
			body TEXT, n REAL, flag INTEGER, d INTEGER, tags TEXT, meta TEXT, geo TEXT, secret TEXT)`); err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if _, err := tx.Exec(`INSERT INTO t VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, rec["id"], rec["created"], rec["updated"],
				rec["title"], rec["body"], rec["n"], rec["flag"], rec["d"], rec["tags"], rec["meta"], rec["geo"], rec["secret"]); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	st, err := fsm.Open(fsm.Options{Path: filepath.Join(t.TempDir(), "f.db"), Registry: reg, OnStall: func(st fsm.Stall) { t.Error(st.Reason) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if res := st.ApplyBatch([]fsm.Entry{{Index: 1, Data: fsm.Command{Type: 1}.Encode()}}); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	return func(where string, args []any) ([]string, error) {
		var ids []string
		err := st.View(context.Background(), func(rd *fsm.Reader) error {
			rows, err := rd.QueryDirect("SELECT id FROM t AS _r WHERE "+where+" ORDER BY id", args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return rows.Err()
		})
		return ids, err
	}
}

// exprGen writes random expressions over testColl.
type exprGen struct{ r *rand.Rand }

func (g *exprGen) lit() string {
	switch g.r.IntN(9) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[g.r.IntN(2)]
	case 2, 3:
		return fmt.Sprint([]float64{0, 1, -1, 5, 10, 2.5, 1e10, 3, 52.5}[g.r.IntN(9)])
	case 4:
		return `"2023-11-14"`
	}
	s := []string{"", "a", "A", "abc", "b", "Hello", "héllo", "50%", "a_b", "a%", "%b", `back\\slash`, "5", "10", "x", "1", "ü", "c"}[g.r.IntN(18)]
	if g.r.IntN(2) == 0 {
		return `'` + strings.ReplaceAll(s, `'`, `\'`) + `'`
	}
	return `"` + s + `"`
}

func (g *exprGen) mods(allowed ...string) string {
	var out string
	for _, m := range allowed {
		if g.r.IntN(5) == 0 {
			out += ":" + m
		}
	}
	return out
}

func (g *exprGen) left() string {
	switch g.r.IntN(14) {
	case 0:
		return []string{"title", "body", "secret"}[g.r.IntN(3)] + g.mods("lower", "length")
	case 1:
		return []string{"n", "flag", "d", "created", "id"}[g.r.IntN(5)]
	case 2:
		return "tags" + g.mods("lower", "each", "length")
	case 3:
		return "meta." + []string{"a", "b", "c", "d", "d.e", "c.0", "c.1", "d.0.e", "zz"}[g.r.IntN(9)] + g.mods("lower", "each", "length")
	case 4:
		return "meta" + g.mods("length")
	case 5:
		return "geo." + []string{"lon", "lat"}[g.r.IntN(2)]
	case 6:
		return "@request.auth." + []string{"id", "name", "age"}[g.r.IntN(3)]
	case 7:
		return "@request.body." + []string{"title", "n", "tags", "missing"}[g.r.IntN(4)] + g.mods("isset", "changed", "length", "lower")
	case 8:
		return "@" + []string{"now", "second", "hour", "weekday", "day", "month", "year", "todayStart", "monthEnd", "yesterday"}[g.r.IntN(10)]
	case 9:
		return "geoDistance(geo.lon, geo.lat, " + []string{"13.4, 52.5", "0, 0", "2.35, 48.85"}[g.r.IntN(3)] + ")"
	case 10:
		return "strftime('" + []string{"%Y", "%m-%d", "%H:%M", "%w", "%j"}[g.r.IntN(5)] + "', " + []string{"d", "created", "@now"}[g.r.IntN(3)] + ")"
	case 11:
		return "@request.method"
	case 12:
		return "@request.query.q" + g.mods("lower")
	}
	return g.lit()
}

func (g *exprGen) right() string {
	if g.r.IntN(4) == 0 {
		return []string{"title", "n", "body", "d", "@request.auth.id", "@now", "meta.b"}[g.r.IntN(7)]
	}
	return g.lit()
}

func (g *exprGen) op() string {
	ops := []string{"=", "!=", ">", ">=", "<", "<=", "~", "!~"}
	op := ops[g.r.IntN(len(ops))]
	if g.r.IntN(3) == 0 {
		op = "?" + op
	}
	return op
}

func (g *exprGen) expr(depth int) string {
	if depth > 0 && g.r.IntN(3) == 0 {
		j := []string{" && ", " || "}[g.r.IntN(2)]
		return "(" + g.expr(depth-1) + j + g.expr(depth-1) + ")"
	}
	return g.left() + " " + g.op() + " " + g.right()
}

func testEnv() *Env {
	return &Env{
		Now:     time.Date(2024, 2, 29, 13, 45, 7, 0, time.UTC),
		Method:  "PATCH",
		Auth:    map[string]any{"id": "abc", "name": "A", "age": 5.0},
		Headers: map[string]string{"x_test": "yes"},
		Query:   map[string]string{"q": "HeLLo"},
		Body:    map[string]any{"title": "abc", "n": 5.0, "tags": `["a","b"]`},
	}
}

// differential checks one expression against every record: the SQL back
// end and the in-memory evaluator agree, or both refuse it.
func differential(t testing.TB, src string, recs []Record, query func(string, []any) ([]string, error), admin bool) (outcome string) {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		return "parse error"
	}
	base := testColl()
	env := testEnv()
	env.AllowHidden = admin
	if len(src)%3 == 0 {
		env.Auth = nil // a guest
	}
	c, cerr := CompileSQL(e, base, oneColl{base}, env, "_r")
	var want []string
	var everr error
	for _, rec := range recs {
		ok, err := Eval(e, base, rec, env)
		if err != nil {
			everr = err
			break
		}
		if ok {
			want = append(want, rec["id"].(string))
		}
	}
	if errors.Is(everr, ErrNeedsDatabase) && cerr == nil {
		// Only SQL can answer; it must still run cleanly.
		if _, err := query(c.Where, c.Args); err != nil {
			t.Fatalf("%s: SQL error %v\nSQL: %s\nargs: %v", src, err, c.Where, c.Args)
		}
		return "sql only"
	}
	if (cerr != nil) != (everr != nil) {
		t.Fatalf("%s: compile error %v, eval error %v", src, cerr, everr)
	}
	if cerr != nil {
		return "refused"
	}
	got, err := query(c.Where, c.Args)
	if err != nil {
		t.Fatalf("%s: SQL error %v\nSQL: %s\nargs: %v", src, err, c.Where, c.Args)
	}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		var diff []string
		in := map[string]bool{}
		for _, id := range got {
			in[id] = true
		}
		for _, rec := range recs {
			id := rec["id"].(string)
			w := false
			for _, x := range want {
				w = w || x == id
			}
			if in[id] != w {
				diff = append(diff, fmt.Sprintf("%s sql=%v mem=%v rec=%v", id, in[id], w, rec))
			}
		}
		t.Fatalf("%s: SQL and memory disagree\nSQL: %s\nargs: %v\n%s", src, c.Where, c.Args, strings.Join(diff, "\n"))
	}
	switch len(got) {
	case 0:
		return "none"
	case len(recs):
		return "all"
	}
	return "some"
}

// TestDifferential runs a few thousand random expressions over random
// records through both back ends.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	recs := randomRecords(r, 60)
	query := openTable(t, recs)
	n := 3000
	if testing.Short() {
		n = 500
	}
	g := &exprGen{r: r}
	outcomes := map[string]int{}
	for i := 0; i < n; i++ {
		outcomes[differential(t, g.expr(2), recs, query, i%2 == 0)]++
	}
	t.Logf("outcomes over %d expressions: %v", n, outcomes)
	// The generator must exercise real comparisons, not only refusals.
	if outcomes["some"] < n/5 {
		t.Fatalf("too few expressions select some but not all records: %v", outcomes)
	}
}

// FuzzDifferential: for any seed, random expressions over random records
// get the same answer from SQL and from memory.
func FuzzDifferential(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1000} {
		f.Add(s)
	}
	r0 := rand.New(rand.NewPCG(99, 1))
	recs := randomRecords(r0, 40)
	query := openTable(f, recs)
	f.Fuzz(func(t *testing.T, seed uint64) {
		g := &exprGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
		for i := 0; i < 20; i++ {
			differential(t, g.expr(3), recs, query, seed%2 == 0)
		}
	})
}
