package api_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"svcd/api/apitest"
)

// vectorList lists path (as the admin, or anonymously) and returns the ids
// in order, their _score and the _vector member.
func vectorList(t testing.TB, s *apitest.Server, path string, admin bool) (ids []string, scores []float64, info map[string]any) {
	t.Helper()
	var res *http.Response
	var body []byte
	if admin {
		res, body = s.AdminDo(t, http.MethodGet, path, nil)
	} else {
		res, body = s.Do(t, http.MethodGet, path, nil, nil)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	out := apitest.DecodeMap(t, body)
	for _, r := range apitest.List(t, out["data"]) {
		m := apitest.Obj(t, r)
		ids = append(ids, m["id"].(string))
		sc, ok := jsonFloat(m["_score"])
		if !ok {
			t.Fatalf("record without _score: %v", m)
		}
		scores = append(scores, sc)
	}
	info, _ = out["_vector"].(map[string]any)
	if info == nil {
		t.Fatalf("answer without _vector: %s", body)
	}
	return ids, scores, info
}

// jsonFloat reads a decoded JSON number.
func jsonFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func nearURL(coll, vec string, extra ...string) string {
	u := "/api/v1/" + coll + "?nearVector=" + url.QueryEscape(vec)
	for _, e := range extra {
		u += "&" + e
	}
	return u
}

func seedVectors(t *testing.T, s *apitest.Server) map[string]string {
	t.Helper()
	s.CreateCollection(t, coll("vecs", "base", []map[string]any{
		f("title", "text", "searchable", true),
		f("emb", "vector", "dimensions", 3),
		f("n", "number"),
		f("pub", "bool"),
	}, "view_rule", "pub = true"))
	ids := map[string]string{}
	for _, r := range []struct {
		key   string
		emb   any
		n     int
		pub   bool
		title string
	}{
		{"a", []float64{1, 0, 0}, 1, true, "red apple"},
		{"b", []float64{0.9, 0.1, 0}, 2, true, "green apple"},
		{"c", []float64{0, 1, 0}, 3, true, "pear"},
		{"d", []float64{-1, 0, 0}, 4, true, "plum"},
		{"e", []float64{1, 0, 0.01}, 5, false, "private apple"},
		{"f", nil, 6, true, "no vector"},
	} {
		rec := map[string]any{"n": r.n, "pub": r.pub, "title": r.title}
		if r.emb != nil {
			rec["emb"] = r.emb
		}
		ids[r.key] = s.CreateRecord(t, "vecs", rec)["id"].(string)
	}
	return ids
}

func TestVectorSearch(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ids := seedVectors(t, s)
	admin := []string{ids["a"], ids["e"], ids["b"], ids["c"], ids["d"]}

	t.Run("JSON and comma forms rank the same", func(t *testing.T) {
		for _, v := range []string{"[1,0,0]", "[ 1.0, 0, 0 ]", "1,0,0", " 2 , 0 , 0 ", "1e0,0,-0"} {
			got, scores, info := vectorList(t, s, nearURL("vecs", v), true)
			if !reflect.DeepEqual(got, admin) {
				t.Errorf("%s: got %v, want %v", v, got, admin)
			}
			want := []float64{1, 1 / math.Sqrt(1.0001), 0.9 / math.Sqrt(0.82), 0, -1}
			for i := range want {
				if i < len(scores) && math.Abs(scores[i]-want[i]) > 1e-5 {
					t.Errorf("%s: score %d = %v, want %v", v, i, scores[i], want[i])
				}
			}
			if apitest.Int(t, info["scanned"]) != 5 || info["truncated"] != false {
				t.Errorf("%s: _vector %v", v, info)
			}
		}
	})
	t.Run("rules: a record the caller cannot view is never ranked", func(t *testing.T) {
		got, _, info := vectorList(t, s, nearURL("vecs", "[1,0,0]"), false)
		if want := []string{ids["a"], ids["b"], ids["c"], ids["d"]}; !reflect.DeepEqual(got, want) {
			t.Errorf("anonymous: got %v, want %v", got, want)
		}
		if apitest.Int(t, info["scanned"]) != 4 {
			t.Errorf("anonymous scanned %v", info)
		}
	})
	t.Run("nearLimit", func(t *testing.T) {
		got, _, _ := vectorList(t, s, nearURL("vecs", "[1,0,0]", "nearLimit=2"), true)
		if !reflect.DeepEqual(got, admin[:2]) {
			t.Errorf("nearLimit=2: %v", got)
		}
		got, _, _ = vectorList(t, s, nearURL("vecs", "[1,0,0]", "nearLimit=1000"), true)
		if len(got) != 5 {
			t.Errorf("nearLimit=1000: %v", got)
		}
		got, _, _ = vectorList(t, s, nearURL("vecs", "[1,0,0]", "perPage=1", "page=3", "sort=n"), true)
		if !reflect.DeepEqual(got, admin) {
			t.Errorf("page, perPage and sort do not apply: %v", got)
		}
	})
	t.Run("nearMinScore", func(t *testing.T) {
		got, _, _ := vectorList(t, s, nearURL("vecs", "[1,0,0]", "nearMinScore=0.5"), true)
		if !reflect.DeepEqual(got, admin[:3]) {
			t.Errorf("nearMinScore=0.5: %v", got)
		}
		got, _, _ = vectorList(t, s, nearURL("vecs", "[1,0,0]", "nearMinScore=1.5"), true)
		if len(got) != 0 {
			t.Errorf("nearMinScore=1.5: %v", got)
		}
	})
	t.Run("filter and search narrow the candidates", func(t *testing.T) {
		got, _, info := vectorList(t, s, nearURL("vecs", "[1,0,0]", "filter="+url.QueryEscape("n >= 2")), true)
		if want := []string{ids["e"], ids["b"], ids["c"], ids["d"]}; !reflect.DeepEqual(got, want) {
			t.Errorf("filter: got %v, want %v", got, want)
		}
		if apitest.Int(t, info["scanned"]) != 4 {
			t.Errorf("filter scanned %v", info)
		}
		got, _, _ = vectorList(t, s, nearURL("vecs", "[0,1,0]", "search=apple"), false)
		if want := []string{ids["b"], ids["a"]}; !reflect.DeepEqual(got, want) {
			t.Errorf("search: got %v, want %v", got, want)
		}
	})
	t.Run("_score survives fields", func(t *testing.T) {
		out := s.MustAdmin(t, http.StatusOK, http.MethodGet, nearURL("vecs", "[1,0,0]", "fields=n", "nearLimit=1"), nil)
		recs := apitest.List(t, out["data"])
		if len(recs) != 1 {
			t.Fatalf("%v", out)
		}
		m := apitest.Obj(t, recs[0])
		if sc, _ := jsonFloat(m["_score"]); len(m) != 3 || m["id"] != ids["a"] || sc != 1 || apitest.Int(t, m["n"]) != 1 {
			t.Errorf("projected record: %v", m)
		}
		if apitest.Int(t, out["totalItems"]) != 1 || apitest.Int(t, out["page"]) != 1 || apitest.Int(t, out["perPage"]) != 1 {
			t.Errorf("page info: %v", out)
		}
	})
	t.Run("truncated at vector.max_candidates", func(t *testing.T) {
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"vector.max_candidates": "2"})
		got, _, info := vectorList(t, s, nearURL("vecs", "[1,0,0]"), true)
		if apitest.Int(t, info["scanned"]) != 2 || info["truncated"] != true || len(got) != 2 {
			t.Errorf("cap 2: %v %v", got, info)
		}
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"vector.max_candidates": "5"})
		_, _, info = vectorList(t, s, nearURL("vecs", "[1,0,0]"), true)
		if apitest.Int(t, info["scanned"]) != 5 || info["truncated"] != true {
			t.Errorf("cap reached exactly: %v", info)
		}
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"vector.max_candidates": "100000"})
		_, _, info = vectorList(t, s, nearURL("vecs", "[1,0,0]"), true)
		if info["truncated"] != false {
			t.Errorf("default cap: %v", info)
		}
	})
	t.Run("writes are seen", func(t *testing.T) {
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/vecs/"+ids["d"], map[string]any{"emb": []float64{0, 0, 5}})
		got, scores, _ := vectorList(t, s, nearURL("vecs", "0,0,1", "nearLimit=1"), true)
		if !reflect.DeepEqual(got, []string{ids["d"]}) || scores[0] != 1 {
			t.Errorf("after update: %v %v", got, scores)
		}
	})
}

func TestVectorSearchErrors(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedVectors(t, s)
	s.CreateCollection(t, coll("twovecs", "base", []map[string]any{
		f("v1", "vector", "dimensions", 2), f("v2", "vector", "dimensions", 2), f("secret", "vector", "dimensions", 2, "hidden", true),
	}, "view_rule", ""))
	s.CreateRecord(t, "twovecs", map[string]any{"v1": []float64{1, 0}, "v2": []float64{0, 1}, "secret": []float64{1, 1}})
	s.CreateCollection(t, coll("novecs", "base", []map[string]any{f("title", "text")}, "view_rule", ""))
	s.CreateCollection(t, coll("lockedvecs", "base", []map[string]any{f("v", "vector", "dimensions", 2)}))

	bad := func(name, path, detail string) apitest.Scenario {
		return apitest.Scenario{Name: name, URL: path, Admin: true, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"` + detail + `"`}}
	}
	scenarios := []apitest.Scenario{
		bad("not a vector field", nearURL("vecs", "[1,0,0]", "nearVectorField=title"), "nearVectorField"),
		bad("unknown field", nearURL("vecs", "[1,0,0]", "nearVectorField=nope"), "nearVectorField"),
		bad("no vector field at all", nearURL("novecs", "[1,0,0]"), "nearVectorField"),
		bad("several vector fields and none named", nearURL("twovecs", "[1,0]"), "nearVectorField"),
		bad("wrong length (short)", nearURL("vecs", "[1,0]"), "nearVector"),
		bad("wrong length (long)", nearURL("vecs", "1,0,0,0"), "nearVector"),
		bad("zero vector", nearURL("vecs", "0,0,0"), "nearVector"),
		bad("empty", nearURL("vecs", ""), "nearVector"),
		bad("cursor", nearURL("vecs", "1,0,0", "cursor="), "cursor"),
		bad("nearLimit 0", nearURL("vecs", "1,0,0", "nearLimit=0"), "nearLimit"),
		bad("nearLimit 1001", nearURL("vecs", "1,0,0", "nearLimit=1001"), "nearLimit"),
		bad("nearLimit not a number", nearURL("vecs", "1,0,0", "nearLimit=ten"), "nearLimit"),
		bad("nearMinScore not a number", nearURL("vecs", "1,0,0", "nearMinScore=high"), "nearMinScore"),
		bad("nearMinScore NaN", nearURL("vecs", "1,0,0", "nearMinScore=NaN"), "nearMinScore"),
	}
	for _, v := range []string{"abc", `["a",0,0]`, "[1,null,0]", "[1,0,0", "[[1],0,0]", `{"a":1}`, "1,,0", "NaN,0,0", "Inf,0,0", "0x1p0,0,0", "1e99,0,0", "true,0,0", "[1,0,0] x"} {
		scenarios = append(scenarios, bad("not a numeric array: "+v, nearURL("vecs", v), "nearVector"))
	}
	scenarios = append(scenarios,
		apitest.Scenario{Name: "a named field of several works", URL: nearURL("twovecs", "[1,0]", "nearVectorField=v2"), Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"_score":0`, `"_vector":{"scanned":1,"truncated":false}`}},
		apitest.Scenario{Name: "a hidden vector field is no field for a non-admin", URL: nearURL("twovecs", "[1,0]", "nearVectorField=secret"),
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"nearVectorField"`}},
		apitest.Scenario{Name: "a hidden vector field serves an admin", URL: nearURL("twovecs", "[1,0]", "nearVectorField=secret"), Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"_score":0.7071`}},
		apitest.Scenario{Name: "a caller refused the collection gets 403 before any 422", URL: nearURL("lockedvecs", "garbage", "nearVectorField=nope"),
			ExpectedStatus: http.StatusForbidden},
		apitest.Scenario{Name: "nearLimit without nearVector is ignored", URL: "/api/v1/vecs?nearLimit=0", Admin: true,
			ExpectedStatus: http.StatusOK, NotExpectedContent: []string{`"_vector"`, `"_score"`}},
		apitest.Scenario{Name: "nearVector in a batch list is 400", Method: http.MethodPost, URL: "/api/v1/batch", Admin: true,
			Body:           map[string]any{"requests": []map[string]any{{"method": "GET", "url": "/api/v1/vecs?nearVector=1,0,0"}}},
			ExpectedStatus: http.StatusBadRequest},
	)
	apitest.Run(t, s, scenarios)
}
