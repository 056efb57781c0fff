package docs

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestAPIRouteTable holds the table of routes in docs/api.md ("## Routes")
// to the router of a real node: every route the server serves has a row,
// and every row names a route the server serves.
func TestAPIRouteTable(t *testing.T) {
	text, err := os.ReadFile("api.md")
	if err != nil {
		t.Fatal(err)
	}
	documented, err := routeTable(string(text))
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.Start(t, apitest.Options{})
	served := map[string]bool{}
	for _, r := range srv.API.Routes() {
		method, path, _ := strings.Cut(r, " ")
		served[method+" "+normalizeRoute(path)] = true
	}
	for _, r := range sortedKeys(served) {
		if !documented[r] {
			t.Errorf("the server serves %s, which docs/api.md's table of routes does not list", r)
		}
	}
	for _, r := range sortedKeys(documented) {
		if !served[r] {
			t.Errorf("docs/api.md's table of routes lists %s, which the server does not serve", r)
		}
	}
}

var (
	routeParam = regexp.MustCompile(`/(\{[^}]*\}|:[A-Za-z]+)`)
	backticked = regexp.MustCompile("`([^`]+)`")
)

// normalizeRoute writes every parameter segment as {} and drops a
// trailing slash.
func normalizeRoute(p string) string {
	p = routeParam.ReplaceAllString(p, "/{}")
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// routeTable reads the rows of the table under "## Routes" as a set of
// "METHOD /path": the methods of a row's first column with each path of
// its second, under /api/v1 unless it starts with /api/, /_/ or
// /realtime.
func routeTable(md string) (map[string]bool, error) {
	start := strings.Index(md, "\n## Routes\n")
	if start < 0 {
		return nil, errNoTable
	}
	out := map[string]bool{}
	for _, line := range strings.Split(md[start:], "\n")[2:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.Contains(cells[1], "method") || strings.Contains(cells[1], "---") {
			continue
		}
		for _, m := range strings.Split(cells[1], ",") {
			m = strings.TrimSpace(m)
			for _, p := range backticked.FindAllStringSubmatch(cells[2], -1) {
				path := p[1]
				if !strings.HasPrefix(path, "/api/") && !strings.HasPrefix(path, "/_/") && !strings.HasPrefix(path, "/realtime") {
					path = "/api/v1" + path
				}
				out[m+" "+normalizeRoute(path)] = true
			}
		}
	}
	if len(out) == 0 {
		return nil, errNoTable
	}
	return out, nil
}

type tableError string

func (e tableError) Error() string { return string(e) }

const errNoTable = tableError("docs/api.md has no table of routes under \"## Routes\"")

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
