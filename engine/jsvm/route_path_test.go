package jsvm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, c := range []struct{ in, norm, pattern, msg string }{
		{"/stats/:coll/", "stats/:coll", "stats/:", ""},
		{"a/b.c/~d-e_f", "a/b.c/~d-e_f", "a/b.c/~d-e_f", ""},
		{":a/:b", ":a/:b", ":/:", ""},
		{"", "", "", "cannot be blank"},
		{"//", "", "", "cannot be blank"},
		{"a b", "a b", "", `segment "a b"`},
		{"a//b", "a//b", "", `segment ""`},
		{"x/:1a", "x/:1a", "", "parameter :1a"},
		{"x/:a/:a", "x/:a/:a", "", "appears twice"},
		{strings.Repeat("a/", 33) + "a", "", "", "at most 32 segments"},
	} {
		_, norm, pattern, msg := parsePath(c.in)
		if c.msg != "" {
			if !strings.Contains(msg, c.msg) {
				t.Errorf("%q: message %q, want it to hold %q", c.in, msg, c.msg)
			}
			continue
		}
		if msg != "" || norm != c.norm || pattern != c.pattern {
			t.Errorf("%q: %q %q %q, want %q %q", c.in, norm, pattern, msg, c.norm, c.pattern)
		}
	}
}

func TestRouteMatching(t *testing.T) {
	s := emptySet()
	for i, r := range []struct{ method, path string }{
		{"GET", "a/:x"}, {"*", "a/:x"}, {"GET", "a/fixed"}, {"*", ":p/fixed"}, {"GET", "a/:x/:y"}, {"POST", "b"},
	} {
		rp, norm, pattern, _ := parsePath(r.path)
		s.routes = append(s.routes, &Route{ID: fmt.Sprint(i), Method: r.method, Path: norm, Enabled: true, pattern: pattern, parsed: rp})
	}
	s.routes = append(s.routes, &Route{ID: "off", Method: "GET", Path: "off", parsed: routePath{segs: []string{"off"}, params: []string{""}}})
	s.index()
	for _, c := range []struct {
		method, path, want, params string
	}{
		{"GET", "a/fixed", "2", "map[]"},
		{"GET", "a/other", "0", "map[x:other]"},
		{"DELETE", "a/other", "1", "map[x:other]"},
		{"DELETE", "a/fixed", "1", "map[x:fixed]"}, // "a/:x" has the literal first
		{"GET", "z/fixed", "3", "map[p:z]"},
		{"GET", "a/b/c", "4", "map[x:b y:c]"},
		{"GET", "b", "", ""},
		{"GET", "off", "", ""},
		{"GET", "a", "", ""},
		{"GET", "a/", "", ""},
	} {
		r, params := s.route(c.method, strings.Split(c.path, "/"))
		got := ""
		if r != nil {
			got = r.ID
		}
		if got != c.want || (r != nil && fmt.Sprint(params) != c.params) {
			t.Errorf("%s %s: route %q %v, want %q %s", c.method, c.path, got, params, c.want, c.params)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Hello, Wörld!":          "hello-world",
		"  Crème Brûlée  ":       "creme-brulee",
		"ﬁve   ½ -- x":           "five-1-2-x",
		"日本語":                    "",
		"already-a-slug_v2":      "already-a-slug-v2",
		"Straße über Øl & Ärger": "strasse-uber-ol-arger",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	got := responseHeaders(map[string]any{
		"x-thing": "v", "X-Num": 42, "Content-Type": "text/html", "X-Svc-Node": "n", "access-control-allow-origin": "*",
		"Set-Cookie": "svc_admin_token=x", "X-Bad": "a\r\nb", "bad name": "x", "Cache-Control": "max-age=60", "X-Null": nil,
	})
	want := map[string]string{"X-Thing": "v", "X-Num": "42", "Cache-Control": "max-age=60"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("headers %v, want %v", got, want)
	}
	if got := responseHeaders(map[string]any{"set-cookie": "theme=dark; Path=/"}); got["Set-Cookie"] != "theme=dark; Path=/" {
		t.Errorf("a cookie of the route's own: %v", got)
	}
}

func TestParseBody(t *testing.T) {
	for _, c := range []struct {
		ct, body, want string
		fails          bool
	}{
		{"application/json", `{"a":[1,2.5]}`, "map[a:[1 2.5]]", false},
		{"application/vnd.api+json; charset=utf-8", `"s"`, "s", false},
		{"application/json", `{bad`, "", true},
		{"application/x-www-form-urlencoded", "a=1&a=2&b=", "map[a:[1 2] b:]", false},
		{"text/plain", "hello", "hello", false},
		{"", "raw", "raw", false},
		{"application/json", "  ", "<nil>", false},
		{"multipart/form-data", "x", "", true},
	} {
		v, err := parseBody(c.ct, []byte(c.body))
		if (err != nil) != c.fails || (!c.fails && fmt.Sprint(v) != c.want) {
			t.Errorf("%s %q: %v %v", c.ct, c.body, v, err)
		}
	}
}

func TestSpecificityIsAnOrder(t *testing.T) {
	var paths []routePath
	for _, p := range []string{"a/:b/c", ":a/b/c", "a/b/c", ":a/:b/:c", "a", ":a", "a/b", ":a/b"} {
		rp, _, _, _ := parsePath(p)
		paths = append(paths, rp)
	}
	for _, a := range paths {
		for _, b := range paths {
			if specificity(a, b) != -specificity(b, a) && !(specificity(a, b) == 0 && specificity(b, a) == 0) {
				t.Errorf("specificity is not antisymmetric for %v and %v", a, b)
			}
			for _, c := range paths {
				if specificity(a, b) < 0 && specificity(b, c) < 0 && specificity(a, c) >= 0 {
					t.Errorf("specificity is not transitive: %v %v %v", a, b, c)
				}
			}
		}
	}
	slices.SortFunc(paths, specificity)
}
