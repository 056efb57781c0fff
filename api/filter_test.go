package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// The filter language over HTTP (SPEC.md "Filter language", docs/filters.md,
// engine/filter/doc.go): every operator, modifier, operand, macro and
// function against a small fixed data set, the limits, and a batch of
// hostile inputs that must never produce a 500.

// Records of the "things" fixture.
var (
	thA   = rid("alpha")   // every field set
	thB   = rid("beta")    // quotes in its title
	thC   = rid("gamma")   // LIKE metacharacters in its title, empty multiples
	thD   = rid("delta")   // nothing set: NULLs everywhere
	thE   = rid("epsilon") // date given as unix seconds
	thAll = []string{thA, thB, thC, thD, thE}
)

// seedThings creates authors, tags, things and comments:
//
//	record  title               n   done  d                     kinds    meta                               loc     author     tags_rel   comments
//	alpha   Alpha               1   true  2024-01-15T10:00:00Z  [a b]    {a:1, list:[x y], s:hello}         Paris   ann (3)    [go rust]  "great post", "great read"
//	beta    beta's "quoted"     2   false 2023-06-01            [b]      {a:2, list:[y]}                    London  bob (10)   [go]       "great", "meh"
//	gamma   Gamma_50%           3   true  2025-12-31T23:59:59Z  []       {a:"3", list:[], s:back\slash}     Berlin  ann (3)    []
//	delta   -                   -   -     -                     -        -                                  -       -          -
//	epsilon epsilon             10  false 1700000000            [a b c]  {a:10, list:[x], s:"line1\nline2"} NYC     bob (10)   [rust]
//
// secret (hidden) is "s1" on alpha only.
func seedThings(t testing.TB, s *apitest.Server) (ann, bob string) {
	t.Helper()
	s.CreateCollection(t, coll("authors", "base", []map[string]any{f("name", "text"), f("age", "number")}, "view_rule", ""))
	s.CreateCollection(t, coll("tags", "base", []map[string]any{f("name", "text")}, "view_rule", ""))
	s.CreateCollection(t, coll("things", "base", []map[string]any{
		f("title", "text"),
		f("n", "number"),
		f("done", "bool"),
		f("d", "date"),
		f("kinds", "select", "values", []string{"a", "b", "c"}, "multiple", true),
		f("meta", "json"),
		f("loc", "geoPoint"),
		f("author", "relation", "collection", "authors"),
		f("tags_rel", "relation", "collection", "tags", "multiple", true),
		f("secret", "text", "hidden", true),
	}, "view_rule", ""))
	s.CreateCollection(t, coll("comments", "base", []map[string]any{
		f("text", "text"), f("post", "relation", "collection", "things"),
	}, "view_rule", ""))

	ann = s.CreateRecord(t, "authors", map[string]any{"name": "ann", "age": 3})["id"].(string)
	bob = s.CreateRecord(t, "authors", map[string]any{"name": "bob", "age": 10})["id"].(string)
	goTag := s.CreateRecord(t, "tags", map[string]any{"name": "go"})["id"].(string)
	rust := s.CreateRecord(t, "tags", map[string]any{"name": "rust"})["id"].(string)
	geo := func(lon, lat float64) map[string]any { return map[string]any{"lon": lon, "lat": lat} }
	for _, r := range []map[string]any{
		{"id": thA, "title": "Alpha", "n": 1, "done": true, "d": "2024-01-15T10:00:00Z", "kinds": []string{"a", "b"},
			"meta": map[string]any{"a": 1, "list": []string{"x", "y"}, "s": "hello"}, "loc": geo(2.3522, 48.8566),
			"author": ann, "tags_rel": []string{goTag, rust}, "secret": "s1"},
		{"id": thB, "title": `beta's "quoted"`, "n": 2, "done": false, "d": "2023-06-01", "kinds": []string{"b"},
			"meta": map[string]any{"a": 2, "list": []string{"y"}}, "loc": geo(-0.1276, 51.5072),
			"author": bob, "tags_rel": []string{goTag}},
		{"id": thC, "title": "Gamma_50%", "n": 3, "done": true, "d": "2025-12-31T23:59:59Z", "kinds": []string{},
			"meta": map[string]any{"a": "3", "list": []string{}, "s": `back\slash`}, "loc": geo(13.405, 52.52),
			"author": ann, "tags_rel": []string{}},
		{"id": thD},
		{"id": thE, "title": "epsilon", "n": 10, "done": false, "d": 1700000000, "kinds": []string{"a", "b", "c"},
			"meta": map[string]any{"a": 10, "list": []string{"x"}, "s": "line1\nline2"}, "loc": geo(-74.006, 40.7128),
			"author": bob, "tags_rel": []string{rust}},
	} {
		s.CreateRecord(t, "things", r)
	}
	for _, c := range []struct{ text, post string }{
		{"great post", thA}, {"great read", thA}, {"great", thB}, {"meh", thB},
	} {
		s.CreateRecord(t, "comments", map[string]any{"text": c.text, "post": c.post})
	}
	return ann, bob
}

// filterCase is a filter and the records it must select from "things".
type filterCase struct {
	expr  string
	want  []string
	admin bool
	// query and headers are added to the request (for @request.*).
	query   string
	headers map[string]string
}

func ids(v ...string) []string { return v }

func filterScenarios(cases []filterCase) []apitest.Scenario {
	out := make([]apitest.Scenario, 0, len(cases))
	for _, c := range cases {
		name := c.expr
		if c.query != "" {
			name += " ?" + c.query
		}
		for k, v := range c.headers {
			name += fmt.Sprintf(" [%s: %s]", k, v)
		}
		if c.admin {
			name += " (admin)"
		}
		u := withFilter("things", c.expr)
		if c.query != "" {
			u += "&" + c.query
		}
		out = append(out, apitest.Scenario{
			Name:           name,
			URL:            u,
			Admin:          c.admin,
			Headers:        c.headers,
			ExpectedStatus: http.StatusOK,
			AfterFunc:      wantIDs(c.want...),
		})
	}
	return out
}

func TestFilterOperators(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ann, _ := seedThings(t, s)
	A, B, C, D, E, all, none := thA, thB, thC, thD, thE, thAll, ids()

	groups := []struct {
		name  string
		cases []filterCase
	}{
		{"text", []filterCase{
			{expr: `title = 'Alpha'`, want: ids(A)},
			{expr: `title = "Alpha"`, want: ids(A)},
			{expr: `title = 'alpha'`, want: none}, // = is case-sensitive
			{expr: `title != 'Alpha'`, want: ids(B, C, D, E)},
			{expr: `title > 'b'`, want: ids(B, E)}, // byte order: upper case sorts first
			{expr: `title >= 'beta'`, want: ids(B, E)},
			{expr: `title < 'Gamma'`, want: ids(A)},
			{expr: `title <= 'Alpha'`, want: ids(A)},
			{expr: `title ~ 'ALPH'`, want: ids(A)}, // ~ is case-insensitive
			{expr: `title ~ ''`, want: ids(A, B, C, E)},
			{expr: `title !~ 'a'`, want: ids(D, E)}, // !~ holds for NULL
			{expr: `title ~ 'lph_'`, want: none},    // _ is literal without %
			{expr: `title ~ 'a_5'`, want: ids(C)},
			{expr: `title ~ 'g%'`, want: ids(C)}, // with %: a LIKE pattern as written
			{expr: `title ~ '%a'`, want: ids(A)},
			{expr: `title ~ '%50\\%'`, want: ids(C)}, // \% escapes % in the pattern
			{expr: `id = '` + A + `'`, want: ids(A)},
			{expr: `id != '` + A + `'`, want: ids(B, C, D, E)},
		}},
		{"string literals and escapes", []filterCase{
			{expr: `title = 'beta\'s "quoted"'`, want: ids(B)},
			{expr: `title = "beta's \"quoted\""`, want: ids(B)},
			{expr: `title ~ "'"`, want: ids(B)},
			{expr: `title ~ '"'`, want: ids(B)},
			{expr: `title = '\A\l\p\h\a'`, want: ids(A)}, // any other escaped character is itself
			{expr: `title = 'Alpha\n'`, want: none},
			{expr: `meta.s = 'line1\nline2'`, want: ids(E)},
			{expr: `meta.s = "back\\slash"`, want: ids(C)},
			{expr: `meta.s ~ 'k\\sl'`, want: ids(C)}, // a backslash in ~ is literal
			{expr: `title = 'Ａlpha'`, want: none},    // non-ASCII is just text
		}},
		{"number", []filterCase{
			{expr: `n = 1`, want: ids(A)},
			{expr: `n = '1'`, want: ids(A)}, // a constant takes the field's kind
			{expr: `n = 1.0`, want: ids(A)},
			{expr: `n = 1e1`, want: ids(E)},
			{expr: `n != 1`, want: ids(B, C, D, E)},
			{expr: `n > 2`, want: ids(C, E)},
			{expr: `n >= 2`, want: ids(B, C, E)},
			{expr: `n < 2`, want: ids(A)},
			{expr: `n <= 2`, want: ids(A, B)},
			{expr: `n > -5.5`, want: ids(A, B, C, E)},
			{expr: `1 < n`, want: ids(B, C, E)},
		}},
		{"bool", []filterCase{
			{expr: `done = true`, want: ids(A, C)},
			{expr: `done = 1`, want: ids(A, C)},
			{expr: `done != true`, want: ids(B, D, E)},
			{expr: `done = false && n != null`, want: ids(B, E)},
		}},
		{"date", []filterCase{
			{expr: `d = '2023-06-01'`, want: ids(B)},
			{expr: `d = "2023-06-01T00:00:00Z"`, want: ids(B)},
			{expr: `d = 1685577600`, want: ids(B)},
			{expr: `d = 1700000000`, want: ids(E)},
			{expr: `d != '2024-01-15 10:00:00'`, want: ids(B, C, D, E)},
			{expr: `d > '2024-01-01'`, want: ids(A, C)},
			{expr: `d >= '2023-11-14T22:13:20Z'`, want: ids(A, C, E)},
			{expr: `d < 1700000001`, want: ids(B, E)},
			{expr: `d <= 1685577600`, want: ids(B)},
			{expr: `created > 0 && created <= @now && updated >= created`, want: all},
			{expr: `created > @now`, want: none},
			{expr: `created > '2020-01-01T00:00:00Z' && updated > "2020-01-01"`, want: all},
		}},
		{"select multiple", []filterCase{
			{expr: `kinds ?= 'a'`, want: ids(A, E)},
			{expr: `kinds ?!= 'b'`, want: ids(A, E)},
			{expr: `kinds ?> 'b'`, want: ids(E)},
			{expr: `kinds ?>= 'b'`, want: ids(A, B, E)},
			{expr: `kinds ?< 'b'`, want: ids(A, E)},
			{expr: `kinds ?<= 'a'`, want: ids(A, E)},
			{expr: `kinds ?~ 'C'`, want: ids(E)},
			{expr: `kinds ?!~ 'a'`, want: ids(A, B, E)},
			{expr: `kinds = 'b'`, want: ids(B)},      // every element
			{expr: `kinds != 'b'`, want: ids(C, D)},  // every element; none counts as one NULL
			{expr: `kinds:each = 'b'`, want: ids(B)}, // every element, and at least one
			{expr: `kinds:each != 'c'`, want: ids(A, B)},
			{expr: `kinds:length = 2`, want: ids(A)},
			{expr: `kinds:length = 0`, want: ids(C, D)},
			{expr: `kinds:length >= 1`, want: ids(A, B, E)},
		}},
		{"json paths", []filterCase{
			{expr: `meta.a = 1`, want: ids(A)},
			{expr: `meta.a = 2`, want: ids(B)},
			{expr: `meta.a = '3'`, want: ids(C)},
			{expr: `meta.a = 3`, want: none}, // a JSON string is text
			{expr: `meta.a >= 2 && meta.a < 100`, want: ids(B, E)},
			{expr: `meta.list.0 = 'x'`, want: ids(A, E)},
			{expr: `meta.list.1 = 'y'`, want: ids(A)},
			{expr: `meta.list ?= 'y'`, want: ids(A, B)},
			{expr: `meta.list ?!= 'y'`, want: ids(A, E)},
			{expr: `meta.list:each = 'x'`, want: ids(E)},
			{expr: `meta.list:length = 2`, want: ids(A)},
			{expr: `meta.list:length = 0`, want: ids(C, D)},
			{expr: `meta.s ~ 'ELL'`, want: ids(A)},
			{expr: `meta.nope = null`, want: all},
			{expr: `meta = null`, want: ids(D)},
		}},
		{"geoPoint", []filterCase{
			{expr: `loc.lon > 0`, want: ids(A, C)},
			{expr: `loc.lat < 50`, want: ids(A, E)},
			{expr: `loc.lon < -10`, want: ids(E)},
			{expr: `loc.lat >= 51.5`, want: ids(B, C)},
			{expr: `loc = null`, want: ids(D)},
			{expr: `geoDistance(loc.lon, loc.lat, 2.3522, 48.8566) < 1`, want: ids(A)},
			{expr: `geoDistance(loc.lon, loc.lat, 2.3522, 48.8566) < 400`, want: ids(A, B)},
			{expr: `geoDistance(loc.lon, loc.lat, 2.3522, 48.8566) < 1000`, want: ids(A, B, C)},
			{expr: `geoDistance(loc.lon, loc.lat, 2.3522, 48.8566) > 5000`, want: ids(E)},
			// Paris-London is about 344 km; one degree of latitude 111.2 km.
			{expr: `geoDistance(loc.lon, loc.lat, -0.1276, 51.5072) > 330 && geoDistance(loc.lon, loc.lat, -0.1276, 51.5072) < 360`, want: ids(A)},
			{expr: `geoDistance(0, 0, 0, 1) > 111.1 && geoDistance(0, 0, 0, 1) < 111.3`, want: all},
		}},
		{"strftime", []filterCase{
			{expr: `strftime('%Y', d) = '2024'`, want: ids(A)},
			{expr: `strftime('%Y-%m-%d', d) = '2023-06-01'`, want: ids(B)},
			{expr: `strftime('%m', d) = "12"`, want: ids(C)},
			{expr: `strftime('%H:%M:%S', d) = '22:13:20'`, want: ids(E)},
			{expr: `strftime('%w', d) = '1'`, want: ids(A)}, // 2024-01-15 was a Monday
			{expr: `strftime('%Y', d) > '2023'`, want: ids(A, C)},
			{expr: `strftime('%Y', d) = null`, want: ids(D)},
		}},
		{"modifiers", []filterCase{
			{expr: `title:lower = 'alpha'`, want: ids(A)},
			{expr: `title:lower ~ 'gamma_'`, want: ids(C)},
			{expr: `title:length = 5`, want: ids(A)},
			{expr: `title:length > 8`, want: ids(B, C)},
			{expr: `title:length = 0`, want: ids(D)},
			{expr: `@request.query.flag:isset = true`, want: none},
			{expr: `@request.query.flag:isset = true`, query: "flag=", want: all},
			{expr: `@request.query.flag:isset = false`, want: all},
			{expr: `@request.headers.x_probe:isset = true`, headers: map[string]string{"X-Probe": "1"}, want: all},
			{expr: `@request.query.word:lower = 'abc'`, query: "word=AbC", want: all},
			{expr: `@request.query.word:length = 3`, query: "word=AbC", want: all},
			// No body on a list: nothing is changed.
			{expr: `@request.body.title:changed = false`, want: all},
		}},
		{"null", []filterCase{
			{expr: `title = null`, want: ids(D)},
			{expr: `null = title`, want: ids(D)},
			{expr: `title != null`, want: ids(A, B, C, E)},
			{expr: `n > null`, want: none}, // ordering with NULL is false
			{expr: `null = null`, want: all},
			{expr: `null != null`, want: none},
			{expr: `author = null`, want: ids(D)},
			{expr: `author.name = null`, want: ids(D)},
			{expr: `d = null`, want: ids(D)},
		}},
		{"logic", []filterCase{
			{expr: `n = 1 || n = 2`, want: ids(A, B)},
			{expr: `n > 0 && done = true`, want: ids(A, C)},
			{expr: `n = 1 || n = 3 && done = false`, want: ids(A)}, // && binds tighter
			{expr: `(n = 1 || n = 3) && done = true`, want: ids(A, C)},
			{expr: `((((n = 1))))`, want: ids(A)},
			{expr: `n = 1 && (title = 'x' || title = 'Alpha')`, want: ids(A)},
			{expr: "n = 1\n||\tn = 2\r\n", want: ids(A, B)},
			{expr: `n=1||n=2`, want: ids(A, B)},
		}},
		{"relations", []filterCase{
			{expr: `author.name = 'ann'`, want: ids(A, C)},
			{expr: `author.name != 'ann'`, want: ids(B, D, E)},
			{expr: `author.name ~ 'AN'`, want: ids(A, C)},
			{expr: `author.age > 5`, want: ids(B, E)},
			{expr: `author = '` + ann + `'`, want: ids(A, C)},
			{expr: `n = author.age`, want: ids(C, D, E)}, // = is NULL-safe: delta has neither
			{expr: `tags_rel.name ?= 'go'`, want: ids(A, B)},
			{expr: `tags_rel.name ?= 'rust'`, want: ids(A, E)},
			{expr: `tags_rel.name ?!= 'go'`, want: ids(A, E)},
			{expr: `tags_rel.name = 'go'`, want: ids(B)},
			{expr: `tags_rel.name:each = 'go'`, want: ids(B)},
			{expr: `tags_rel:length = 2`, want: ids(A)},
			{expr: `tags_rel.name:length = 0`, want: ids(C, D)},
		}},
		{"back-relations", []filterCase{
			{expr: `comments_via_post.text ~ 'great'`, want: ids(A)}, // every comment (none: NULL)
			{expr: `comments_via_post.text ?~ 'great'`, want: ids(A, B)},
			{expr: `comments_via_post.text ?~ 'meh'`, want: ids(B)},
			{expr: `comments_via_post.text:each ~ 'great'`, want: ids(A)},
			{expr: `comments_via_post.text ?= 'meh' && author.name = 'bob'`, want: ids(B)},
			{expr: `comments_via_post:length = 2`, want: ids(A, B)},
			{expr: `comments_via_post:length = 0`, want: ids(C, D, E)},
		}},
		{"@collection", []filterCase{
			{expr: `@collection.authors.name ?= 'ann'`, want: all},
			{expr: `@collection.authors.name ?= 'zed'`, want: none},
			{expr: `@collection.authors.age ?= n`, want: ids(C, E)},
			{expr: `@collection.comments.post ?= id`, want: ids(A, B)},
			{expr: `@collection.comments.text:length = 4`, want: all},
			{expr: `@collection.comments.post.title ?= 'Alpha'`, want: all},
		}},
		{"@request", []filterCase{
			{expr: `@request.method = 'GET'`, want: all},
			{expr: `@request.context = 'default'`, want: all},
			{expr: `@request.auth.id = null`, want: all}, // anonymous
			{expr: `@request.query.pick = title`, query: "pick=Alpha", want: ids(A)},
			{expr: `@request.query.pick = n`, query: "pick=3", want: ids(C)},
			{expr: `@request.headers.x_pick = title`, headers: map[string]string{"X-Pick": "epsilon"}, want: ids(E)},
		}},
		{"malformed filters are dropped", []filterCase{
			{expr: `title = `, want: all},
			{expr: `nope = 1`, want: all},
			{expr: `title === 'Alpha'`, want: all},
			{expr: `(n = 1`, want: all},
			{expr: `n = 1)`, want: all},
			{expr: `n ~ '1'`, want: all},      // ~ needs text
			{expr: `title ~ null`, want: all}, // ~ needs text
			{expr: `title = 'unterminated`, want: all},
			{expr: `@nowish > 1`, want: all},
			{expr: `title:upper = 'ALPHA'`, want: all},
			{expr: `kinds ?= @collection.tags.name`, want: all}, // a multi-valued right operand
		}},
		{"hidden fields", []filterCase{
			// Filtering on a hidden field would leak it: anonymous callers'
			// filter is dropped, admins' applies.
			{expr: `secret = 's1'`, want: all},
			{expr: `secret = 's1'`, admin: true, want: ids(A)},
		}},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { apitest.Run(t, s, filterScenarios(g.cases)) })
	}
}

// TestFilterMacros compares dates set around the current instant and the
// day, month and year boundaries (UTC) with every datetime macro. The
// expected answer is recomputed just before and just after each request; a
// request that straddles a change of the macro's value is retried.
func TestFilterMacros(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("moments", "base", []map[string]any{f("d", "date"), f("label", "text")}, "view_rule", ""))

	type bounds struct{ now, dayStart, dayEnd, monthStart, monthEnd, yearStart, yearEnd int64 }
	at := func(t time.Time) bounds {
		t = t.UTC()
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		month := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		year := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		return bounds{
			now:      t.Unix(),
			dayStart: day.Unix(), dayEnd: day.AddDate(0, 0, 1).Unix() - 1,
			monthStart: month.Unix(), monthEnd: month.AddDate(0, 1, 0).Unix() - 1,
			yearStart: year.Unix(), yearEnd: year.AddDate(1, 0, 0).Unix() - 1,
		}
	}
	b := at(time.Now())
	const margin, day = 300, 86400
	dates := map[string]int64{
		"dayStart-1": b.dayStart - 1, "dayStart": b.dayStart, "dayEnd": b.dayEnd, "dayEnd+1": b.dayEnd + 1,
		"monthStart-1": b.monthStart - 1, "monthStart": b.monthStart, "monthEnd": b.monthEnd, "monthEnd+1": b.monthEnd + 1,
		"yearStart-1": b.yearStart - 1, "yearStart": b.yearStart, "yearEnd": b.yearEnd, "yearEnd+1": b.yearEnd + 1,
		"now-5m": b.now - margin, "now+5m": b.now + margin,
		"yesterday-5m": b.now - day - margin, "yesterday+5m": b.now - day + margin,
		"tomorrow-5m": b.now + day - margin, "tomorrow+5m": b.now + day + margin,
	}
	byID := map[string]int64{}
	for label, d := range dates {
		id := s.CreateRecord(t, "moments", map[string]any{"d": d, "label": label})["id"].(string)
		byID[id] = d
	}
	allIDs := func() []string {
		var out []string
		for id := range byID {
			out = append(out, id)
		}
		return out
	}
	where := func(pred func(d int64, b bounds) bool) func(b bounds) []string {
		return func(b bounds) []string {
			var out []string
			for id, d := range byID {
				if pred(d, b) {
					out = append(out, id)
				}
			}
			return out
		}
	}
	// A calendar macro equals its value now: every record, or none.
	calendar := func(macro string, value func(t time.Time) int) (func(time.Time) string, func(bounds) []string) {
		return func(t time.Time) string { return fmt.Sprintf("@%s = %d", macro, value(t.UTC())) },
			func(bounds) []string { return allIDs() }
	}
	type macroCase struct {
		name   string
		filter func(t time.Time) string
		want   func(b bounds) []string
	}
	fixed := func(expr string, pred func(d int64, b bounds) bool) macroCase {
		return macroCase{expr, func(time.Time) string { return expr }, where(pred)}
	}
	cal := func(macro string, value func(t time.Time) int) macroCase {
		f, w := calendar(macro, value)
		return macroCase{"@" + macro, f, w}
	}
	cases := []macroCase{
		fixed(`d < @now`, func(d int64, b bounds) bool { return d < b.now }),
		fixed(`d > @now`, func(d int64, b bounds) bool { return d > b.now }),
		fixed(`d >= @todayStart && d <= @todayEnd`, func(d int64, b bounds) bool { return d >= b.dayStart && d <= b.dayEnd }),
		fixed(`d < @todayStart`, func(d int64, b bounds) bool { return d < b.dayStart }),
		fixed(`d > @todayEnd`, func(d int64, b bounds) bool { return d > b.dayEnd }),
		fixed(`d >= @monthStart && d <= @monthEnd`, func(d int64, b bounds) bool { return d >= b.monthStart && d <= b.monthEnd }),
		fixed(`d >= @yearStart && d <= @yearEnd`, func(d int64, b bounds) bool { return d >= b.yearStart && d <= b.yearEnd }),
		fixed(`d < @yesterday`, func(d int64, b bounds) bool { return d < b.now-day }),
		fixed(`d > @tomorrow`, func(d int64, b bounds) bool { return d > b.now+day }),
		fixed(`d > @yesterday && d < @tomorrow`, func(d int64, b bounds) bool { return d > b.now-day && d < b.now+day }),
		fixed(`strftime('%Y-%m-%d', d) = strftime('%Y-%m-%d', @now)`, func(d int64, b bounds) bool { return d >= b.dayStart && d <= b.dayEnd }),
		fixed(`@second >= 0 && @second < 60 && @minute < 60 && @hour < 24 && @weekday < 7 && @day >= 1 && @day <= 31 && @month >= 1 && @month <= 12 && @year > 2000`,
			func(int64, bounds) bool { return true }),
		cal("second", func(t time.Time) int { return t.Second() }),
		cal("minute", func(t time.Time) int { return t.Minute() }),
		cal("hour", func(t time.Time) int { return t.Hour() }),
		cal("weekday", func(t time.Time) int { return int(t.Weekday()) }), // 0 = Sunday
		cal("day", func(t time.Time) int { return t.Day() }),
		cal("month", func(t time.Time) int { return int(t.Month()) }),
		cal("year", func(t time.Time) int { return t.Year() }),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for attempt := 0; ; attempt++ {
				t0 := time.Now()
				expr := c.filter(t0)
				want := c.want(at(t0))
				res, body := s.Do(t, http.MethodGet, withFilter("moments", expr), nil, nil)
				t1 := time.Now()
				if c.filter(t1) != expr || !sameSet(c.want(at(t1)), want) {
					if attempt < 3 {
						continue // a boundary passed during the request
					}
					t.Skip("the clock kept crossing a boundary")
				}
				if res.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", expr, res.StatusCode, body)
				}
				if got := dataIDs(t, body); !sameSet(got, want) {
					label := func(ids []string) []string {
						var out []string
						for _, id := range sorted(ids) {
							for l, d := range dates {
								if byID[id] == d {
									out = append(out, l)
								}
							}
						}
						return out
					}
					t.Errorf("%s:\n got %v\nwant %v", expr, label(got), label(want))
				}
				return
			}
		})
	}
	// A calendar macro that does not hold selects nothing.
	apitest.Scenario{
		URL:            withFilter("moments", "@month = 13 || @day = 0 || @weekday = 7"),
		ExpectedStatus: http.StatusOK,
		AfterFunc:      wantIDs(),
	}.Test(t, s)
}

// TestFilterLimits: SPEC.md limits 4096 characters, 50 operands, depth 32.
// An expression past a limit is malformed, so the list ignores it.
func TestFilterLimits(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedThings(t, s)
	pad := func(expr string, n int) string { return expr + strings.Repeat(" ", n-len(expr)) }
	quoted := func(n int) string { // title = 'xxx...' of n characters
		return "title = '" + strings.Repeat("x", n-len("title = ''")) + "'"
	}
	operands := func(n int) string { // n/2 comparisons
		return strings.TrimSuffix(strings.Repeat("n = 3 || ", n/2), " || ")
	}
	nested := func(depth int) string {
		return strings.Repeat("(", depth) + "n = 3" + strings.Repeat(")", depth)
	}
	if len(pad("n = 3", 4096)) != 4096 || len(quoted(4097)) != 4097 || strings.Count(operands(50), "=") != 25 {
		t.Fatal("the limit cases are built wrong")
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "4096 characters apply", URL: withFilter("things", pad("n = 3", 4096)), ExpectedStatus: 200, AfterFunc: wantIDs(thC)},
		{Name: "4097 characters are ignored", URL: withFilter("things", pad("n = 3", 4097)), ExpectedStatus: 200, AfterFunc: wantIDs(thAll...)},
		{Name: "a 4096-character literal applies", URL: withFilter("things", quoted(4096)), ExpectedStatus: 200, AfterFunc: wantIDs()},
		{Name: "a 4097-character literal is ignored", URL: withFilter("things", quoted(4097)), ExpectedStatus: 200, AfterFunc: wantIDs(thAll...)},
		{Name: "50 operands apply", URL: withFilter("things", operands(50)), ExpectedStatus: 200, AfterFunc: wantIDs(thC)},
		{Name: "52 operands are ignored", URL: withFilter("things", operands(52)), ExpectedStatus: 200, AfterFunc: wantIDs(thAll...)},
		// Operands come in pairs; a 51st that is incomplete is malformed too.
		{Name: "51 operands", URL: withFilter("things", operands(50)+" || n"), ExpectedStatus: 200, AfterFunc: wantIDs(thAll...)},
		{Name: "depth 32 applies", URL: withFilter("things", nested(32)), ExpectedStatus: 200, AfterFunc: wantIDs(thC)},
		{Name: "depth 33 is ignored", URL: withFilter("things", nested(33)), ExpectedStatus: 200, AfterFunc: wantIDs(thAll...)},
	})

	// The limit is in characters (SPEC.md): 3000 two-byte characters are
	// 6000 bytes but well under 4096 characters.
	t.Run("the length limit counts characters, not bytes", func(t *testing.T) {
		expr := "title = '" + strings.Repeat("é", 3000) + "'"
		apitest.Scenario{URL: withFilter("things", expr), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs()}.Test(t, s)
	})
}

// hostileFilters is a batch of filters built to break the parser, the
// compiler or the SQL they produce. Used as list filters and as rules.
var hostileFilters = []string{
	"", " ", "(", ")", "((((", "))))", "&&", "||", "=", "?=", "!", "~", "''", `"`, `'`, `\`,
	"n = 1 &&", "&& n = 1", "n = 1 || || n = 2", "n = 1 n = 2", "n == 1", "n =! 1", "n <> 1", "n => 1",
	"title = '' OR 1=1 --'", "title = ''; DROP TABLE things; --", `title = "\"; DELETE FROM things; --"`,
	"title = 'x') OR (1=1", "1 = 1", "1 = '1'", "'a' ~ 'b'", "null ~ null", "true = true", "false",
	"n", "@request", "@request.nope = 1", "@request.auth.id.x = 1", "@request.body.a.b = 1", "@request.method.x = 1",
	"@request.headers = 1", "@request.query = 1", "@collection = 1", "@collection.things = 1",
	"@collection.nope.x = 1", "@collection.things.nope ?= 1", "@collection.things.secret ?= 's1'",
	"@collection.things.title ?= @collection.things.title", "title = @collection.things.title",
	"@now = @now", "@now", "@now.x = 1", "@now:lower = 1", "@unknown = 1", "@ = 1", "@@ = 1",
	"geoDistance() > 1", "geoDistance(1, 2, 3) > 1", "geoDistance(1, 2, 3, 4, 5) > 1",
	"geoDistance(title, 'x', null, true) > 1", "geoDistance(kinds, meta, loc, author) > 1",
	"geoDistance(geoDistance(1,2,3,4), 1, 2, 3) > 1", "geoDistance(1, 2, 3, 4) ~ 'x'",
	"geoDistance(loc.lon, loc.lat, 1e308, -1e308) > 1", "geoDistance(1,2,3,4)",
	"strftime() = 1", "strftime('%Y') = 1", "strftime(d, '%Y') = 1", "strftime('%Q', d) = 1", "strftime('%', d) = 1",
	"strftime('%Y', title) = 1", "strftime('%Y', kinds) = 1", "strftime('%Y', 1e300) = '1'", "strftime('%Y', -1e300) = '1'",
	"strftime('%Y', meta.a) = '1'", "strftime('%Y', tags_rel.name) = '1'", "nofunc(1) = 1", "title(1) = 1",
	"n ~ 1", "n !~ 'x'", "title ~ n", "title ~ meta.a", "title ~ title", "title ~ author.name", "title ~ '%'",
	"title ~ '%\\\\'", "title ~ '\\\\'", "title ~ '%%%%'", "title ~ '_%_%_'", "title !~ '%\\\\'", "kinds ?~ '%\\\\'",
	"n:lower = 'x'", "kinds:lower ?= 'A'", "title:length:lower = 1", "title:lower:length = 5", "title:each = 'x'",
	"meta:each = 1", "meta:length > 0", "loc:length > 0", "meta.list:each:length = 1", "kinds:each:each = 'a'",
	"title:isset = true", "title:changed = true", "@request.body.title:changed:lower = 1",
	"@request.body.title.x:changed = 1", "@request.query.x:changed = 1", "@request.query.x:each = 1",
	"kinds:length:length = 1", "tags_rel:lower = 'x'", "id:length = 15", ":lower = 1", "title: = 1", "title:: = 1",
	"meta.a.b.c.d.e.f.g.h.i = 1", "author.author.author = 1", "author.name.x = 1", "author.nope = 1",
	"tags_rel.name.x ?= 1", "comments_via_post = 1", "comments_via_post.post.comments_via_post.text ?= 'x'",
	"comments_via_nope.x = 1", "nope_via_post.x = 1", "things_via_author.title ?= 'x'", "_via_ = 1", "x_via_ = 1",
	"comments_via_post.post.author.name ?= 'ann' && tags_rel.name ?= 'go' && @collection.comments.post.tags_rel.name ?= 'go'",
	"n > 1e308", "n > 1e309", "n > -1e309", "n = 1e-400", "n = 0x10", "n = 1.2.3", "n = --1", "n = -", "n = .", "n = 1e",
	"n = 99999999999999999999999999999", "n = -0", "d > 'not a date'", "d > '9999-99-99'", "d = 99999999999999",
	"title = '\x00'", "title = '\xff\xfe'", "title = 'é' || title ~ '日本'", "title\x00 = 1", "title = 'x'\x00",
	"meta.0 = 1", "meta.list.99999999999999999999 = 1", "meta.list.-1 = 1", "meta.'a' = 1", "meta.\"a\" = 1",
	"id ?= id", "author ?= comments_via_post.id", "kinds ?= kinds", "kinds = kinds", "tags_rel ?= tags_rel",
	"password = 1", "secret = 1", "collectionId = 1", "collectionName = 'things'", "expand = 1", "created:lower = 1",
	strings.Repeat("(", 5000), strings.Repeat("n = 1 || ", 600) + "n = 1", strings.Repeat("a.", 2000) + "a = 1",
	"title = '" + strings.Repeat("\\", 4000) + "'", strings.Repeat("@collection.comments.post.comments_via_post.text ?= 'x' || ", 8) + "n = 1",
}

// TestFilterHostileInputs: no filter makes a list fail; a malformed one is
// dropped, so every answer is a 200 list.
func TestFilterHostileInputs(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedThings(t, s)
	for i, expr := range hostileFilters {
		for _, admin := range []bool{false, true} {
			h := map[string]string{}
			if admin {
				h = s.AdminHeaders(t, nil)
			}
			res, body := s.Do(t, http.MethodGet, "/api/v1/things?filter="+url.QueryEscape(expr), nil, h)
			if res.StatusCode != http.StatusOK {
				t.Errorf("filter #%d %.80q (admin %v): %d %s", i, expr, admin, res.StatusCode, body)
				continue
			}
			apitest.List(t, apitest.DecodeMap(t, body)["data"])
		}
	}
	// The table is intact.
	apitest.Scenario{URL: withFilter("things", ""), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(thAll...)}.Test(t, s)
}

// TestFilterHiddenRelations: a hidden field cannot be filtered by
// non-admins (the filter is dropped), whichever way the filter reaches it.
func TestFilterHiddenRelations(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	x := seedArticles(t, s)
	all := []string{x.art1, x.art2, x.art3}
	var sc []apitest.Scenario
	for _, expr := range []string{
		`hidden_author.name = 'bob'`,
		`hidden_author = '` + x.bob + `'`,
		`@collection.articles.hidden_author ?= '` + x.bob + `' && title = 'one'`,
		`@collection.hnotes.article ?= id`,
	} {
		sc = append(sc,
			apitest.Scenario{Name: expr, URL: withFilter("articles", expr), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(all...)},
			apitest.Scenario{Name: expr + " (admin)", URL: withFilter("articles", expr), Admin: true, ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(x.art1)},
		)
	}
	apitest.Run(t, s, sc)

	t.Run("through a back-relation", func(t *testing.T) {
		expr := `hnotes_via_article.text ?= 'hidden link'`
		apitest.Scenario{URL: withFilter("articles", expr), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(all...)}.Test(t, s)
		apitest.Scenario{URL: withFilter("articles", expr), Admin: true, ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(x.art1)}.Test(t, s)
	})
}
