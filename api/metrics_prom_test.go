package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"svcd/api/apitest"
)

const promURL = "/api/v1/metrics"

// scrape reads the node's Prometheus text with headers (nil: none).
func scrape(t testing.TB, s *apitest.Server, path string, headers map[string]string) string {
	t.Helper()
	res, body := s.Do(t, http.MethodGet, path, nil, headers)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q", ct)
	}
	return string(body)
}

// sampleValue is the value of the sample named exactly series in text
// (-1 when absent).
func sampleValue(t testing.TB, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return -1
}

func TestPrometheusMetrics(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.AdminToken(t)
	const settings = "/api/v1/admin/settings"
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "off by default: 404 as for an unknown route",
			URL:            promURL,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "on with metrics.enabled=1", Method: http.MethodPatch, URL: settings, Admin: true,
			Body: map[string]any{"metrics.enabled": "1"}, ExpectedStatus: http.StatusOK,
		},
		{
			Name:           "with no token set, anyone may scrape",
			URL:            promURL,
			ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{
				"# TYPE svc_http_requests_total counter",
				`svc_http_requests_total{route="/api/v1/admin/settings",method="PATCH",status="200"} 1`,
				"# TYPE svc_http_request_duration_seconds histogram",
				`svc_http_request_duration_seconds_bucket{route="/api/v1/admin/settings",method="PATCH",le="+Inf"} 1`,
				`svc_raft_state{state="leader"} 1`,
				`svc_raft_state{state="follower"} 0`,
				"# TYPE svc_raft_apply_duration_seconds histogram",
				`svc_raft_apply_duration_seconds_bucket{le="0.001"}`,
				"svc_raft_term ", "svc_raft_commit_index ", "svc_raft_applied_index ", "svc_raft_log_bytes ",
				"svc_raft_snapshots_total ", "svc_sqlite_transactions_total ", "svc_sqlite_busy_errors_total 0",
				"svc_sqlite_wal_bytes ", "svc_realtime_connections 0", "svc_realtime_dropped_total 0",
				"go_goroutines ", "process_resident_memory_bytes ",
			},
		},
		{
			Name: "the route label is chi's pattern, never the raw path", Admin: true,
			URL: "/api/v1/admin/collections/nosuchcoll9d7", ExpectedStatus: http.StatusNotFound,
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				text := scrape(t, s, promURL, nil)
				if !strings.Contains(text, `svc_http_requests_total{route="/api/v1/admin/collections/{name}",method="GET",status="404"} 1`) {
					t.Errorf("no pattern-labelled 404 in:\n%s", text)
				}
				if strings.Contains(text, "nosuchcoll9d7") {
					t.Errorf("a raw path reached a label")
				}
			},
		},
		{
			Name: "metrics.token set", Method: http.MethodPatch, URL: settings, Admin: true,
			Body: map[string]any{"metrics.token": "scrape-secret-1"}, ExpectedStatus: http.StatusOK,
		},
		{Name: "no token is 401", URL: promURL, ExpectedStatus: http.StatusUnauthorized},
		{
			Name: "a wrong bearer token is 401", URL: promURL, ExpectedStatus: http.StatusUnauthorized,
			Headers: map[string]string{"Authorization": "Bearer scrape-secret-2"},
		},
		{Name: "a wrong ?token= is 401", URL: promURL + "?token=scrape-secret", ExpectedStatus: http.StatusUnauthorized},
		{
			Name: "an admin token is not the metrics token", URL: promURL, Admin: true,
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name: "the bearer token is accepted", URL: promURL, ExpectedStatus: http.StatusOK,
			Headers:         map[string]string{"Authorization": "Bearer scrape-secret-1"},
			ExpectedContent: []string{`svc_http_requests_total{route="/api/v1/metrics",method="GET",status="401"} 4`},
		},
		{
			Name: "?token= is accepted", URL: promURL + "?token=scrape-secret-1", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{"svc_raft_term "},
		},
		{
			Name: "metrics off again", Method: http.MethodPatch, URL: settings, Admin: true,
			Body: map[string]any{"metrics.enabled": "0"}, ExpectedStatus: http.StatusOK,
		},
		{Name: "off is 404 even with the token", URL: promURL + "?token=scrape-secret-1", ExpectedStatus: http.StatusNotFound},
	})
}

// TestPrometheusCountersMove checks that requests and writes move the
// figures: the request counter, the histogram's count, the state
// machine's transactions and the applied index.
func TestPrometheusCountersMove(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"metrics.enabled": "1"})
	s.CreateCollection(t, map[string]any{"name": "notes", "fields": []any{map[string]any{"name": "title", "type": "text"}},
		"view_rule": "", "create_rule": ""})
	const listed = `svc_http_requests_total{route="/api/v1/{collection}",method="GET",status="200"}`
	const count = `svc_http_request_duration_seconds_count{route="/api/v1/{collection}",method="GET"}`
	before := scrape(t, s, promURL, nil)
	for i := 0; i < 3; i++ {
		s.CreateRecord(t, "notes", map[string]any{"title": "n" + strconv.Itoa(i)})
		if res, body := s.Do(t, http.MethodGet, "/api/v1/notes", nil, nil); res.StatusCode != http.StatusOK {
			t.Fatalf("list = %d: %s", res.StatusCode, body)
		}
	}
	after := scrape(t, s, promURL, nil)
	if b, a := max(sampleValue(t, before, listed), 0), sampleValue(t, after, listed); a != b+3 {
		t.Errorf("%s: %v then %v; want 3 more", listed, b, a)
	}
	if b, a := max(sampleValue(t, before, count), 0), sampleValue(t, after, count); a != b+3 {
		t.Errorf("%s: %v then %v; want 3 more", count, b, a)
	}
	for _, series := range []string{"svc_sqlite_transactions_total", "svc_raft_applied_index", "svc_raft_apply_duration_seconds_count"} {
		if b, a := sampleValue(t, before, series), sampleValue(t, after, series); b < 1 || a < b+3 {
			t.Errorf("%s: %v then %v; want at least 3 more", series, b, a)
		}
	}
	// A snapshot taken through the admin route is counted.
	if v := sampleValue(t, after, "svc_raft_snapshots_total"); v != 0 {
		t.Fatalf("svc_raft_snapshots_total = %v before any snapshot", v)
	}
	s.MustAdmin(t, http.StatusOK, http.MethodPost, "/api/v1/admin/cluster/snapshot", nil)
	if v := sampleValue(t, scrape(t, s, promURL, nil), "svc_raft_snapshots_total"); v != 1 {
		t.Errorf("svc_raft_snapshots_total = %v after one snapshot", v)
	}
	// Buckets are cumulative and end at +Inf with the count.
	inf := sampleValue(t, after, `svc_http_request_duration_seconds_bucket{route="/api/v1/{collection}",method="GET",le="+Inf"}`)
	if c := sampleValue(t, after, count); inf != c {
		t.Errorf("+Inf bucket %v, count %v", inf, c)
	}
}

// TestPrometheusPromtool runs promtool check metrics (its parser and
// linter) on a real node's answer.
func TestPrometheusPromtool(t *testing.T) {
	t.Parallel()
	bin := apitest.Promtool(t)
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"metrics.enabled": "1"})
	// Traffic of several routes and statuses, a queue job and a webhook
	// delivery, so every family has samples.
	s.CreateCollection(t, map[string]any{"name": "posts", "fields": []any{map[string]any{"name": "title", "type": "text"}}})
	s.AdminDo(t, http.MethodGet, "/api/v1/admin/collections/nope", nil)
	s.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/queues/mail/jobs", map[string]any{"payload": map[string]any{"to": "a"}})
	text := scrape(t, s, promURL, nil)
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\n--- input:\n%s", err, out, text)
	}
	if !strings.Contains(text, `svc_queue_jobs{state="queued"} 1`) {
		t.Errorf("no queued job in:\n%s", text)
	}

}

// TestGrafanaDashboard checks that every query of the Grafana dashboard
// in deploy/ names a metric a real node emits (with some traffic, a
// queue job and a snapshot behind it).
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"metrics.enabled": "1"})
	s.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/queues/mail/jobs", map[string]any{"payload": map[string]any{"to": "a"}})
	text := scrape(t, s, promURL, nil)
	emitted := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			emitted[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
		}
	}
	raw, err := os.ReadFile("../deploy/grafana/svcd.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&dash); err != nil {
		t.Fatalf("deploy/grafana/svcd.json: %v", err)
	}
	names := regexp.MustCompile(`\b(svc|go|process)_[a-z0-9_]+\b`)
	exprs := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs++
			found := names.FindAllString(tg.Expr, -1)
			if len(found) == 0 {
				t.Errorf("panel %q: %q names no metric", p.Title, tg.Expr)
			}
			for _, n := range found {
				if !emitted[n] {
					t.Errorf("panel %q: %s is not emitted by the node", p.Title, n)
				}
			}
		}
	}
	if exprs < 10 {
		t.Errorf("the dashboard has %d queries; want one per family at least", exprs)
	}
}

// TestPrometheusPerServer checks that two servers in one process keep
// their own figures: each has its own metrics.Set.
func TestPrometheusPerServer(t *testing.T) {
	t.Parallel()
	a, b := apitest.Start(t, apitest.Options{}), apitest.Start(t, apitest.Options{})
	for _, s := range []*apitest.Server{a, b} {
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"metrics.enabled": "1"})
	}
	for i := 0; i < 2; i++ {
		a.AdminDo(t, http.MethodGet, "/api/v1/admin/collections", nil)
	}
	const series = `svc_http_requests_total{route="/api/v1/admin/collections",method="GET",status="200"}`
	if v := sampleValue(t, scrape(t, a, promURL, nil), series); v != 2 {
		t.Errorf("server a: %s = %v; want 2", series, v)
	}
	if v := sampleValue(t, scrape(t, b, promURL, nil), series); v != -1 {
		t.Errorf("server b: %s = %v; want none (it served no such request)", series, v)
	}
}
