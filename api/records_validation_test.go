package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// allFields is one field of every type family, plus required and unique.
func allFields() []map[string]any {
	return []map[string]any{
		f("t", "text", "min", 2, "max", 5, "pattern", "[a-z]+"),
		f("ed", "editor", "max", 10),
		f("e", "email", "domains_except", []string{"blocked.com"}),
		f("u", "url", "domains_only", []string{"example.com"}),
		f("n", "number", "min", 0, "max", 10),
		f("i", "number", "integer", true),
		f("b", "bool"),
		f("d", "date", "min", 0),
		f("s", "select", "values", []string{"a", "b", "c"}),
		f("m", "select", "values", []string{"a", "b", "c"}, "multiple", true, "max_select", 2),
		f("j", "json", "max_size", 20),
		f("g", "geoPoint"),
		f("r", "relation", "collection", "targets"),
		f("rm", "relation", "collection", "targets", "multiple", true),
		f("v", "vector", "dimensions", 3),
		f("p", "password", "min", 8),
		f("fl", "file"),
		f("ad", "autodate", "on_create", true, "on_update", true),
		f("req", "text", "required", true),
		f("uq", "text", "unique", true),
	}
}

func TestRecordValidation(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("targets", "base", nil))
	target := s.CreateRecord(t, "targets", map[string]any{})["id"].(string)
	target2 := s.CreateRecord(t, "targets", map[string]any{})["id"].(string)
	s.CreateCollection(t, coll("all", "base", allFields()))

	// with returns a valid body (req is required) with kv applied.
	with := func(kv ...any) map[string]any {
		m := map[string]any{"req": "present"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	invalid := []struct {
		field string
		value any
	}{
		{"t", "a"},      // min
		{"t", "abcdef"}, // max
		{"t", "ab1"},    // pattern
		{"t", 12},       // type
		{"ed", strings.Repeat("x", 11)},
		{"e", "not-an-email"},
		{"e", "Name <a@example.com>"},
		{"e", "x@blocked.com"},
		{"e", 5},
		{"u", "not a url"},
		{"u", "ftp://example.com/x"},
		{"u", "https://other.com/x"},
		{"u", "javascript:alert(1)"},
		{"n", -1}, // min
		{"n", 11}, // max
		{"n", "abc"},
		{"n", true},
		{"n", []int{1}},
		{"i", 1.5}, // integer
		{"b", "yes"},
		{"b", 2},
		{"b", []any{}},
		{"d", "yesterday"},
		{"d", "2024-13-45"},
		{"d", -5}, // min 0
		{"d", 1.5},
		{"s", "z"},
		{"s", []string{"a"}}, // single select takes a string
		{"m", []string{"a", "z"}},
		{"m", []string{"a", "b", "c"}}, // max_select 2
		{"j", map[string]any{"long": strings.Repeat("x", 30)}}, // max_size
		{"g", map[string]any{"lon": 181, "lat": 0}},
		{"g", map[string]any{"lon": 0, "lat": -91}},
		{"g", map[string]any{"lon": 0}},
		{"g", map[string]any{"lon": 0, "lat": 0, "alt": 1}},
		{"g", []float64{1, 2}},
		{"r", "not-an-id"},
		{"r", []string{target}}, // single relation takes a string
		{"rm", []string{"bad"}},
		{"v", []float64{1, 2}},       // dimensions
		{"v", []float64{1, 2, 3, 4}}, // dimensions
		{"v", []any{1, "x", 3}},
		{"v", "1,2,3"},
		{"p", "short"},  // min 8
		{"p", 12345678}, // type
		{"fl", "photo.png"},
		{"fl", []string{"a.png"}},
		{"req", ""},
		{"req", nil},
		{"req", "   "[:0]},
	}
	var sc []apitest.Scenario
	for _, c := range invalid {
		sc = append(sc, apitest.Scenario{
			Name:            fmt.Sprintf("%s=%v is 422 on %s", c.field, c.value, c.field),
			Method:          http.MethodPost,
			URL:             "/api/v1/all",
			Admin:           true,
			Body:            with(c.field, c.value),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"error":"Validation failed"`},
			AfterFunc:       apitest.Details(c.field),
		})
	}
	sc = append(sc,
		apitest.Scenario{
			Name:            "a missing required field is 422",
			Method:          http.MethodPost,
			URL:             "/api/v1/all",
			Admin:           true,
			Body:            map[string]any{},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"cannot be blank"},
			AfterFunc:       apitest.Details("req"),
		},
		apitest.Scenario{
			Name:           "every bad field is reported at once",
			Method:         http.MethodPost,
			URL:            "/api/v1/all",
			Admin:          true,
			Body:           map[string]any{"t": "1", "n": 99, "e": "x", "id": "BAD"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("t", "n", "e", "req", "id"),
		},
		apitest.Scenario{
			Name:            "a relation to a missing record is 422",
			Method:          http.MethodPost,
			URL:             "/api/v1/all",
			Admin:           true,
			Body:            with("r", "aaaaaaaaaaaaaaa"),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"does not exist"},
			AfterFunc:       apitest.Details("r"),
		},
		apitest.Scenario{
			Name:           "a multiple relation with one missing record is 422",
			Method:         http.MethodPost,
			URL:            "/api/v1/all",
			Admin:          true,
			Body:           with("rm", []string{target, "aaaaaaaaaaaaaaa"}),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("rm"),
		},
	)
	t.Run("invalid", func(t *testing.T) { apitest.Run(t, s, sc) })

	var id string
	t.Run("valid values are stored in their normal form", func(t *testing.T) {
		apitest.Scenario{
			Method: http.MethodPost,
			URL:    "/api/v1/all",
			Admin:  true,
			Body: with(
				"t", "abc", "ed", "<b>hi</b>", "e", "Bob@EXAMPLE.com", "u", "https://example.com/a?b=1",
				"n", 2.5, "i", "7", "b", "true", "d", "2024-01-02T03:04:05Z", "s", "b",
				"m", []string{"c", "a", "a"}, "j", map[string]any{"k": []int{1}}, "g", map[string]any{"lon": -73.5, "lat": 45},
				"r", target, "rm", []string{target2, target, target}, "v", []float64{0.5, -1, 2},
				"p", "s3cret-password", "uq", "one", "ad", 5,
			),
			ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{
				`"t":"abc"`, `"ed":"<b>hi</b>"`, `"e":"Bob@example.com"`, `"u":"https://example.com/a?b=1"`,
				`"n":2.5`, `"i":7`, `"b":true`, `"d":1704164645`, `"s":"b"`, `"m":["c","a"]`,
				`"j":{"k":[1]}`, `"g":{"lon":-73.5,"lat":45}`, `"r":"` + target + `"`,
				`"rm":["` + target2 + `","` + target + `"]`, `"v":[0.5,-1,2]`, `"fl":null`, `"uq":"one"`, `"req":"present"`,
			},
			NotExpectedContent: []string{`"p":`, "s3cret", `"ad":5`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				rec := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
				id = rec["id"].(string)
				if fmt.Sprint(rec["ad"]) != fmt.Sprint(rec["created"]) {
					t.Errorf("autodate ad = %v, created = %v", rec["ad"], rec["created"])
				}
			},
		}.Test(t, s)
	})

	valid := []struct {
		field string
		value any
		want  string
	}{
		{"d", 1700000000, `"d":1700000000`},
		{"d", "1700000000", `"d":1700000000`},
		{"d", "2024-01-02", `"d":1704153600`},
		{"d", "2024-01-02 03:04:05", `"d":1704164645`},
		{"d", "2024-01-02T05:04:05+02:00", `"d":1704164645`},
		{"b", false, `"b":false`},
		{"b", 1, `"b":true`},
		{"b", nil, `"b":false`},
		{"n", "3", `"n":3`},
		{"n", 0, `"n":0`},
		{"n", nil, `"n":null`},
		{"i", -4, `"i":-4`},
		{"t", "", `"t":""`},
		{"s", "", `"s":null`},
		{"m", []string{}, `"m":[]`},
		{"j", "just a string", `"j":"just a string"`},
		{"j", nil, `"j":null`},
		{"g", map[string]any{"lon": 180, "lat": -90}, `"g":{"lon":180,"lat":-90}`},
		{"v", []float64{1, 2, 3}, `"v":[1,2,3]`},
		{"e", " spaced@example.com ", `"e":"spaced@example.com"`},
		{"r", "", `"r":null`},
		{"m", "a", `"m":["a"]`},
		{"rm", nil, `"rm":[]`},
	}
	var vs []apitest.Scenario
	for _, c := range valid {
		vs = append(vs, apitest.Scenario{
			Name:            fmt.Sprintf("%s=%v is stored as %s", c.field, c.value, c.want),
			Method:          http.MethodPatch,
			URL:             "/api/v1/all/" + id,
			Admin:           true,
			Body:            map[string]any{c.field: c.value},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{c.want, `"req":"present"`},
		})
	}
	vs = append(vs,
		apitest.Scenario{
			Name:           "an update is validated too",
			Method:         http.MethodPatch,
			URL:            "/api/v1/all/" + id,
			Admin:          true,
			Body:           map[string]any{"n": 100, "req": ""},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("n", "req"),
		},
		apitest.Scenario{
			Name:           "an update to a missing relation target is 422",
			Method:         http.MethodPatch,
			URL:            "/api/v1/all/" + id,
			Admin:          true,
			Body:           map[string]any{"r": "bbbbbbbbbbbbbbb"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("r"),
		},
		apitest.Scenario{
			Name:           "a file field cannot be set through JSON on update either",
			Method:         http.MethodPatch,
			URL:            "/api/v1/all/" + id,
			Admin:          true,
			Body:           map[string]any{"fl": "x.png"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("fl"),
		},
		apitest.Scenario{
			Name:               "the password is never returned, also on GET and list",
			URL:                "/api/v1/all",
			Admin:              true,
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{`"p":`, "argon2"},
		},
		apitest.Scenario{
			Name:            "unique values are enforced",
			Method:          http.MethodPost,
			URL:             "/api/v1/all",
			Admin:           true,
			Body:            with("uq", "one"),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"must be unique"},
			AfterFunc:       apitest.Details("uq"),
		},
		apitest.Scenario{
			Name:           "unique values are enforced on update",
			Method:         http.MethodPost,
			URL:            "/api/v1/all",
			Admin:          true,
			Body:           with("uq", "two"),
			ExpectedStatus: http.StatusCreated,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				other := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["id"].(string)
				apitest.Scenario{
					Method:         http.MethodPatch,
					URL:            "/api/v1/all/" + other,
					Admin:          true,
					Body:           map[string]any{"uq": "one"},
					ExpectedStatus: http.StatusUnprocessableEntity,
					AfterFunc:      apitest.Details("uq"),
				}.Test(t, s)
			},
		},
		apitest.Scenario{
			Name:           "empty values do not collide on a unique field",
			Method:         http.MethodPost,
			URL:            "/api/v1/all",
			Admin:          true,
			Body:           with(),
			ExpectedStatus: http.StatusCreated,
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				s.CreateRecord(t, "all", with("uq", ""))
				s.CreateRecord(t, "all", with("uq", ""))
			},
		},
	)
	t.Run("valid", func(t *testing.T) { apitest.Run(t, s, vs) })
}

// TestRecordAutodate: on_update autodates move on update, on_create ones
// do not.
func TestRecordAutodate(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("pages", "base", []map[string]any{
		f("title", "text"),
		f("made", "autodate", "on_create", true),
		f("touched", "autodate", "on_update", true),
	}))
	rec := s.CreateRecord(t, "pages", map[string]any{"made": 1, "touched": 1})
	if fmt.Sprint(rec["made"]) != fmt.Sprint(rec["created"]) || fmt.Sprint(rec["touched"]) != fmt.Sprint(rec["created"]) {
		t.Errorf("autodates on create: %v", rec)
	}
	out := s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/pages/"+rec["id"].(string), map[string]any{"title": "x", "made": 2})
	got := apitest.Obj(t, out["data"])
	if fmt.Sprint(got["made"]) != fmt.Sprint(rec["made"]) {
		t.Errorf("on_create autodate changed on update: %v -> %v", rec["made"], got["made"])
	}
	if apitest.Int(t, got["touched"]) < apitest.Int(t, rec["touched"]) {
		t.Errorf("on_update autodate went back: %v -> %v", rec["touched"], got["touched"])
	}
}
