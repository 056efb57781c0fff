package filter

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	`title = "abc"`, `n > 5 && (flag = true || d < @now)`, `tags ?= "a"`, `tags:each != "c"`,
	`meta.c.0 = 1`, `meta.d.e:length > 0`, `title:lower ~ 'HEL%'`, `@request.body.title:changed = true`,
	`geoDistance(geo.lon, geo.lat, 13.4, 52.5) < 10`, `strftime('%Y', d) = "2023"`, `t_via_x.y = 1`,
	`@collection.t.title ?= "a"`, `((((n = 1))))`, `title = 'it\'s'`, `n = -1.5e3`, `id != null`,
	`@request.auth.id = ""`, `title ~ "50%"`, `a = `, `= 1`, `(title = 1`, `title == 1`, `"x" = "x"`,
}

// FuzzParse: any input either parses or gives a SyntaxError; never a
// panic; the limits hold.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %T %v is not a SyntaxError", src, err, err)
			}
			return
		}
		if utf8.RuneCountInString(src) > MaxLength {
			t.Fatalf("%q: longer than the limit but parsed", src)
		}
		if n := countOperands(e); n > MaxOperands {
			t.Fatalf("%q: %d operands parsed", src, n)
		}
	})
}

func countOperands(e Expr) int {
	switch x := e.(type) {
	case *Logical:
		return countOperands(x.Left) + countOperands(x.Right)
	case *Compare:
		return countIn(x.Left) + countIn(x.Right)
	}
	return 0
}

func countIn(o Operand) int {
	if c, ok := o.(*Call); ok {
		n := 1
		for _, a := range c.Args {
			n += countIn(a)
		}
		return n
	}
	return 1
}

// FuzzCompile: whatever parses either compiles to SQL that SQLite runs
// without error (and agrees with the evaluator), or is refused with a
// CompileError; nothing reaches SQLite as a malformed statement.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	recs := randomRecords(rand.New(rand.NewPCG(5, 5)), 25)
	query := openTable(f, recs)
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			return
		}
		base := testColl()
		if _, err := CompileSQL(e, base, oneColl{base}, testEnv(), "_r"); err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("%q: error %T %v is not a CompileError", src, err, err)
			}
			return
		}
		differential(t, src, recs, query, strings.Contains(src, "secret"))
	})
}
