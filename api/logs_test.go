package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// logPage is a page of /admin/logs or /admin/logs/search.
type logPage struct {
	Data       []map[string]any `json:"data"`
	Page       int              `json:"page"`
	PerPage    int              `json:"perPage"`
	TotalItems int              `json:"totalItems"`
	TotalPages int              `json:"totalPages"`
	Nodes      []string         `json:"nodes"`
	Failed     []struct {
		Node  string `json:"node"`
		Error string `json:"error"`
	} `json:"failed"`
}

// readLogPage decodes {data: page}.
func readLogPage(t testing.TB, body []byte) logPage {
	t.Helper()
	var out struct {
		Data logPage `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("log page: %v: %s", err, body)
	}
	return out.Data
}

// logCheck decodes the page and hands it to check.
func logCheck(check func(t testing.TB, p logPage)) func(t testing.TB, s *apitest.Server, body []byte) {
	return func(t testing.TB, s *apitest.Server, body []byte) {
		t.Helper()
		check(t, readLogPage(t, body))
	}
}

// paths lists the lines' paths.
func paths(p logPage) []string {
	out := make([]string, len(p.Data))
	for i, l := range p.Data {
		out[i], _ = l["path"].(string)
	}
	return out
}

// newestFirst fails unless the lines' times never increase.
func newestFirst(t testing.TB, p logPage) {
	t.Helper()
	var prev time.Time
	for i, l := range p.Data {
		tm, err := time.Parse(time.RFC3339Nano, l["time"].(string))
		if err != nil {
			t.Fatalf("line %d time: %v", i, err)
		}
		if i > 0 && tm.After(prev) {
			t.Errorf("line %d (%s) is newer than the one before (%s)", i, tm, prev)
		}
		prev = tm
	}
}

// TestLogs: the request lines land in the file of their UTC day
// (<data>/logs/YYYY-MM-DD.jsonl; the injected clock crosses midnight),
// and GET /admin/logs filters them by date, from/to, q and level, pages
// newest first, and refuses malformed parameters; POST /admin/logs/search
// applies a JSONPath per line; a viewer reads, a user and an anonymous
// caller do not.
func TestLogs(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Date(2031, 1, 1, 23, 58, 0, 0, time.UTC))
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	owner := s.AdminToken(t)
	ownerID := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(owner)))["data"])["id"].(string)
	_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
	s.CreateCollection(t, usersCollection())
	user := signUp(t, s, "u@example.com")

	// Day 1: a 404 with a marker.
	if res, _ := s.Do(t, "GET", "/api/v1/admin/collections/marker-day-one", nil, bearer(owner)); res.StatusCode != http.StatusNotFound {
		t.Fatalf("marker 1: %d", res.StatusCode)
	}
	clock.Advance(3 * time.Minute) // 2031-01-02 00:01
	if res, _ := s.Do(t, "GET", "/api/v1/admin/collections/marker-day-two", nil, bearer(owner)); res.StatusCode != http.StatusNotFound {
		t.Fatalf("marker 2: %d", res.StatusCode)
	}
	res, body := s.Do(t, "POST", "/api/v1/admin/collections", coll("logged", "base", nil), bearer(owner))
	if res.StatusCode != http.StatusCreated || res.Header.Get("X-Svc-Index") == "" || res.Header.Get("X-Request-Id") == "" {
		t.Fatalf("create: %d %v %s", res.StatusCode, res.Header, body)
	}
	createID := res.Header.Get("X-Request-Id")
	for _, day := range []string{"2031-01-01", "2031-01-02"} {
		if _, err := os.Stat(filepath.Join(s.DataDir, "logs", day+".jsonl")); err != nil {
			t.Fatalf("the file of %s: %v", day, err)
		}
	}

	const u = "/api/v1/admin/logs"
	has := func(want ...string) func(t testing.TB, p logPage) {
		return func(t testing.TB, p logPage) {
			t.Helper()
			got := strings.Join(paths(p), " ")
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("no line with %q in %v", w, got)
				}
			}
		}
	}
	lacks := func(not string) func(t testing.TB, p logPage) {
		return func(t testing.TB, p logPage) {
			t.Helper()
			for _, path := range paths(p) {
				if strings.Contains(path, not) {
					t.Errorf("a line with %q: %s", not, path)
				}
			}
		}
	}
	all := func(checks ...func(t testing.TB, p logPage)) func(t testing.TB, s *apitest.Server, body []byte) {
		return logCheck(func(t testing.TB, p logPage) {
			t.Helper()
			newestFirst(t, p)
			for _, c := range checks {
				c(t, p)
			}
		})
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "today by default: day two's lines, not day one's", URL: u, Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: all(has("marker-day-two", "/api/v1/admin/collections"), lacks("marker-day-one"))},
		{Name: "date picks day one", URL: u + "?date=2031-01-01&perPage=500", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: all(has("marker-day-one", "/api/v1/admin/setup"), lacks("marker-day-two"))},
		{Name: "from and to span both days", URL: u + "?from=2031-01-01&to=2031-01-02T00:02:00Z&q=marker-day", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: all(has("marker-day-one", "marker-day-two"), func(t testing.TB, p logPage) {
				if p.TotalItems != 2 || paths(p)[0] != "/api/v1/admin/collections/marker-day-two" {
					t.Errorf("from/to with q: %d lines %v, want the two markers, day two's first", p.TotalItems, paths(p))
				}
			})},
		{Name: "to before the second marker", URL: u + "?from=2031-01-01T00:00:00Z&to=2031-01-01T23:59:59Z&q=marker-day", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: all(has("marker-day-one"), lacks("marker-day-two"))},
		{Name: "q is a substring, case ignored", URL: u + "?q=MARKER-DAY-TWO", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: all(has("marker-day-two"), func(t testing.TB, p logPage) {
				for _, path := range paths(p) {
					if !strings.Contains(strings.ToLower(path), "marker-day-two") {
						t.Errorf("a line without q: %s", path)
					}
				}
			})},
		{Name: "level warn keeps 4xx lines only", URL: u + "?level=warn&perPage=500", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: all(has("marker-day-two"), func(t testing.TB, p logPage) {
				for _, l := range p.Data {
					if l["level"] != "WARN" && l["level"] != "ERROR" {
						t.Errorf("a %v line under level=warn: %v", l["level"], l)
					}
				}
			})},
		{Name: "level error: none", URL: u + "?level=ERROR", Admin: true, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"data":[]`, `"totalItems":0`}},
		{Name: "a line's fields: route, principal, index, request id, no token", URL: u + "?q=" + createID, Admin: true, ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{owner},
			AfterFunc: all(func(t testing.TB, p logPage) {
				if len(p.Data) != 1 {
					t.Fatalf("the create's line: %v", p.Data)
				}
				l := p.Data[0]
				pr, _ := l["principal"].(map[string]any)
				if l["method"] != "POST" || l["route"] != "/api/v1/admin/collections" || l["status"] != float64(201) || l["kind"] != "request" ||
					l["index"] == nil || l["index"] == float64(0) || l["request_id"] != createID || l["ip"] != "127.0.0.1" || l["node"] == "" ||
					pr["type"] != "admin" || pr["id"] != ownerID || l["bytes"] == float64(0) || l["duration_ms"] == nil || l["time"] != "2031-01-02T00:01:00Z" {
					t.Errorf("the create's line: %v", l)
				}
			})},
		{Name: "paging: two per page, page two", URL: u + "?perPage=2&page=2", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: all(func(t testing.TB, p logPage) {
				if p.Page != 2 || p.PerPage != 2 || len(p.Data) != 2 || p.TotalPages != (p.TotalItems+1)/2 || p.TotalItems < 5 {
					t.Errorf("page 2 of 2: %+v", p)
				}
			})},
		{Name: "perPage is clamped to 500", URL: u + "?perPage=100000", Admin: true, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"perPage":500`}},
		{Name: "a page past the end is empty", URL: u + "?page=1000000000000", Admin: true, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"data":[]`}},
		{Name: "a bad date", URL: u + "?date=2031-13-01", Admin: true, ExpectedStatus: http.StatusBadRequest, AfterFunc: apitest.Details("date")},
		{Name: "date with from", URL: u + "?date=2031-01-01&from=2031-01-01", Admin: true, ExpectedStatus: http.StatusBadRequest, AfterFunc: apitest.Details("date")},
		{Name: "to before from", URL: u + "?from=2031-01-02&to=2031-01-01", Admin: true, ExpectedStatus: http.StatusBadRequest, AfterFunc: apitest.Details("to")},
		{Name: "a bad level, page and node", URL: u + "?level=loud&page=0&node=node9", Admin: true, ExpectedStatus: http.StatusBadRequest, AfterFunc: apitest.Details("level", "page", "node")},
		{Name: "a viewer reads", URL: u, Headers: bearer(viewer), ExpectedStatus: http.StatusOK},
		{Name: "a viewer searches", Method: "POST", URL: u + "/search", Body: map[string]any{"query": "$[*]"}, Headers: bearer(viewer), ExpectedStatus: http.StatusOK},
		{Name: "a user may not", URL: u, Headers: bearer(user), ExpectedStatus: http.StatusForbidden},
		{Name: "a user may not search", Method: "POST", URL: u + "/search", Body: map[string]any{"query": "$[*]"}, Headers: bearer(user), ExpectedStatus: http.StatusForbidden},
		{Name: "anonymous", URL: u, ExpectedStatus: http.StatusUnauthorized},

		{Name: "search: a filter on status over both days", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusOK,
			Body: map[string]any{"query": "$[?@.status == 404]", "from": "2031-01-01", "to": "2031-01-02"},
			AfterFunc: all(has("marker-day-one", "marker-day-two"), func(t testing.TB, p logPage) {
				for _, l := range p.Data {
					if l["status"] != float64(404) {
						t.Errorf("a %v line: %v", l["status"], l)
					}
				}
			})},
		{Name: "search: parentheses and a nested member", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusOK,
			Body: map[string]any{"query": `$[?(@.principal.type == "admin" && @.method == "POST")]`, "limit": 1},
			AfterFunc: all(func(t testing.TB, p logPage) {
				if len(p.Data) != 1 || p.PerPage != 1 || p.Data[0]["method"] != "POST" {
					t.Errorf("admin POSTs, limit 1: %+v", p)
				}
			})},
		{Name: "search: a member selector keeps the lines that have it", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusOK,
			Body: map[string]any{"query": "$[*].index"},
			AfterFunc: all(func(t testing.TB, p logPage) {
				if p.TotalItems < 1 {
					t.Errorf("no line with an index")
				}
				for _, l := range p.Data {
					if l["index"] == nil {
						t.Errorf("a line without index: %v", l)
					}
				}
			})},
		{Name: "search: $.status selects nothing (the root is the array)", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusOK,
			Body: map[string]any{"query": "$.status"}, ExpectedContent: []string{`"totalItems":0`}},
		{Name: "search: a malformed JSONPath", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusUnprocessableEntity,
			Body: map[string]any{"query": "$[?@.status >= 500"}, ExpectedContent: []string{"jsonpath"}, AfterFunc: apitest.Details("query")},
		{Name: "search: no query", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusUnprocessableEntity,
			Body: map[string]any{}, AfterFunc: apitest.Details("query")},
		{Name: "search: a bad from and limit", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusUnprocessableEntity,
			Body: map[string]any{"query": "$[*]", "from": "yesterday", "limit": -1}, AfterFunc: apitest.Details("from", "limit")},
		{Name: "search: limit is clamped to 500", Method: "POST", URL: u + "/search", Admin: true, ExpectedStatus: http.StatusOK,
			Body: map[string]any{"query": "$[*]", "limit": 9999}, ExpectedContent: []string{`"perPage":500`}},
	})
}
