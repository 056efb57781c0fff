package api_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"svcd/api/apitest"
)

// logBuffer collects a node's log lines (JSON, one a line); safe for the
// node's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the lines holding every one of parts.
func (l *logBuffer) lines(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range strings.Split(l.b.String(), "\n") {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

// TestListTellsWhatItDropped: SPEC.md has a list drop a malformed filter
// and ignore unknown sort columns, answering 200 with every row the view
// rule admits. The answer says so in X-Svc-Filter-Error and
// X-Svc-Sort-Error (printable ASCII), and the node logs it at debug level.
func TestListTellsWhatItDropped(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	s := apitest.Start(t, apitest.Options{Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s.CreateCollection(t, coll("items", "base", []map[string]any{
		f("title", "text"), f("public", "bool"), f("note", "text", "hidden", true),
	}, "view_rule", "public = true"))
	a := s.CreateRecord(t, "items", map[string]any{"title": "a", "public": true})["id"].(string)
	b := s.CreateRecord(t, "items", map[string]any{"title": "b", "public": true})["id"].(string)
	s.CreateRecord(t, "items", map[string]any{"title": "c", "public": false})
	list := func(q string) string { return "/api/v1/items?" + q }
	filter := func(expr string) string { return list("filter=" + url.QueryEscape(expr)) }
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "a filter that does not parse: dropped, every permitted row, and why",
			URL:  filter("title ~"), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(a, b),
			ExpectedHeaders: map[string]string{"X-Svc-Filter-Error": "expected a value, found end of expression at offset 7"},
		},
		{
			Name: "the realtime filter example",
			URL:  filter("title = ~ 'x'"), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(a, b),
			ExpectedHeaders: map[string]string{"X-Svc-Filter-Error": "expected a value, found '~' at offset 8"},
		},
		{
			Name: "an unknown field",
			URL:  filter(`title = "a" || titel = "b"`), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(a, b),
			ExpectedHeaders: map[string]string{"X-Svc-Filter-Error": `unknown field "titel" at offset 15`},
		},
		{
			Name: "a hidden field reads to a guest as one that does not exist",
			URL:  filter(`note = "x"`), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(a, b),
			ExpectedHeaders: map[string]string{"X-Svc-Filter-Error": `unknown field "note" at offset 0`},
		},
		{
			Name: "an admin may filter on it: no header",
			URL:  filter(`note = "x"`), Admin: true, ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(),
			BeforeFunc: noHeaders(filter(`note = "x"`), true),
		},
		{
			Name: "a filter that applies: no header",
			URL:  filter(`title = "a"`) + "&sort=-title", ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(a),
			BeforeFunc: noHeaders(filter(`title = "a"`)+"&sort=-title", false),
		},
		{
			Name: "a name outside ASCII is escaped in the header",
			URL:  filter("tïtle = 1"), ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(a, b),
			ExpectedHeaders: map[string]string{"X-Svc-Filter-Error": `unexpected character '\u00c3' at offset 1`},
		},
		{
			Name: "unknown sort terms are named, the known ones apply",
			URL:  list("sort=titel,-title,-nope"), ExpectedStatus: http.StatusOK,
			ExpectedHeaders: map[string]string{"X-Svc-Sort-Error": `unknown sort fields "titel", "nope"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if got := dataIDs(t, body); len(got) != 2 || got[0] != b {
					t.Errorf("sorted by -title: %v", got)
				}
			},
		},
		{
			Name: "a hidden sort column reads to a guest as unknown",
			URL:  list("sort=note"), ExpectedStatus: http.StatusOK,
			ExpectedHeaders: map[string]string{"X-Svc-Sort-Error": `unknown sort field "note"`},
		},
		{
			// PocketBase's path (api/pbcompat) refuses the filter instead,
			// as PocketBase does.
			Name: "PocketBase's path refuses it with a 400",
			URL:  "/api/collections/items/records?filter=" + url.QueryEscape("(("), ExpectedStatus: http.StatusBadRequest,
			ExpectedContent: []string{`"status":400`, `"filter":{"code":"validation_invalid_filter","message":"Expected a value, found end of expression at offset 2."}`},
		},
	})
	if got := logs.lines(`"level":"DEBUG"`, `"msg":"list filter dropped"`, `"reason":"unknown field \"titel\" at offset 15"`); len(got) != 1 {
		t.Errorf("debug lines for the unknown field: %q", got)
	}
	if got := logs.lines(`"level":"DEBUG"`, `"msg":"list sort terms ignored"`, `"sort":"titel,-title,-nope"`); len(got) != 1 {
		t.Errorf("debug lines for the sort: %q", got)
	}
}

// noHeaders is a BeforeFunc checking that a list of path answers without
// X-Svc-Filter-Error or X-Svc-Sort-Error.
func noHeaders(path string, admin bool) func(t testing.TB, s *apitest.Server) {
	return func(t testing.TB, s *apitest.Server) {
		t.Helper()
		var h map[string]string
		if admin {
			h = s.AdminHeaders(t, nil)
		}
		res, body := s.Do(t, http.MethodGet, path, nil, h)
		for _, k := range []string{"X-Svc-Filter-Error", "X-Svc-Sort-Error"} {
			if v := res.Header.Get(k); v != "" || res.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %d %s: %q %s", path, res.StatusCode, k, v, body)
			}
		}
	}
}
