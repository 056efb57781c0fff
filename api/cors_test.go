package api_test

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"svcd/api/apitest"
)

const (
	appOrigin   = "https://app.example"
	otherOrigin = "https://other.example:8443"
	evilOrigin  = "https://evil.example"
)

// setCORS patches cors.* settings through the admin API.
func setCORS(t *testing.T, s *apitest.Server, kv map[string]any) {
	t.Helper()
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, kv)
}

// preflight sends OPTIONS path as a browser would before method.
func preflight(t *testing.T, s *apitest.Server, path, origin, method, headers string) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{"Origin": origin, "Access-Control-Request-Method": method}
	if headers != "" {
		h["Access-Control-Request-Headers"] = headers
	}
	return s.Do(t, http.MethodOptions, path, nil, h)
}

// noCORS fails if res carries any Access-Control-* header.
func noCORS(t *testing.T, what string, res *http.Response) {
	t.Helper()
	for k, v := range res.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("%s: unexpected %s: %v", what, k, v)
		}
	}
}

// varies reports whether res's Vary lists name.
func varies(res *http.Response, name string) bool {
	for _, line := range res.Header.Values("Vary") {
		for _, v := range strings.Split(line, ",") {
			if strings.EqualFold(strings.TrimSpace(v), name) {
				return true
			}
		}
	}
	return false
}

func headerList(res *http.Response, key string) []string {
	var out []string
	for _, v := range strings.Split(res.Header.Get(key), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, strings.ToLower(v))
		}
	}
	return out
}

func TestCORSOffByDefault(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	res, _ := s.Do(t, http.MethodGet, "/_/health", nil, map[string]string{"Origin": appOrigin})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", res.StatusCode)
	}
	noCORS(t, "GET with empty cors.origins", res)
	if varies(res, "Origin") {
		t.Error("Vary: Origin without CORS configured")
	}
	res, body := preflight(t, s, "/api/v1/admin/collections", appOrigin, http.MethodPost, "content-type")
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("preflight with CORS off: %d, want 403", res.StatusCode)
	}
	apitest.CheckCommon(t, res, body)
	noCORS(t, "preflight with empty cors.origins", res)
}

func TestCORSOriginList(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	setCORS(t, s, map[string]any{"cors.origins": " " + appOrigin + " , " + otherOrigin + "/ "})
	coll := s.CreateCollection(t, public(coll("notes", "base", []map[string]any{f("title", "text")})))
	if coll["name"] != "notes" {
		t.Fatalf("collection: %v", coll)
	}

	// Every root route is covered: the API, the legacy records routes, the
	// probes, and the WebSocket path (a plain GET, not an upgrade: 4xx).
	for _, path := range []string{"/_/health", "/api/v1/notes", "/api/collections/notes/records", "/realtime", "/api/v1/nosuchroute"} {
		for _, origin := range []string{appOrigin, otherOrigin, strings.ToUpper(appOrigin)} {
			res, _ := s.Do(t, http.MethodGet, path, nil, map[string]string{"Origin": origin})
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("GET %s from %s: Allow-Origin %q (status %d)", path, origin, got, res.StatusCode)
			}
			if !varies(res, "Origin") {
				t.Errorf("GET %s: no Vary: Origin", path)
			}
			if res.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("GET %s: Allow-Credentials with cors.credentials off", path)
			}
			exposed := headerList(res, "Access-Control-Expose-Headers")
			for _, h := range []string{"etag", "x-svc-index", "x-svc-node", "retry-after", "x-request-id"} {
				if !slices.Contains(exposed, h) {
					t.Errorf("GET %s: %s not exposed: %v", path, h, exposed)
				}
			}
		}
		res, _ := s.Do(t, http.MethodGet, path, nil, map[string]string{"Origin": evilOrigin})
		noCORS(t, "GET "+path+" from an unlisted origin", res)
		if !varies(res, "Origin") {
			t.Errorf("GET %s from an unlisted origin: no Vary: Origin", path)
		}
		res, _ = s.Do(t, http.MethodGet, path, nil, nil)
		noCORS(t, "GET "+path+" without Origin", res)
		if !varies(res, "Origin") {
			t.Errorf("GET %s without Origin: no Vary: Origin (a cache could hand it to another origin)", path)
		}
	}

	// A write's answer exposes its index and version to the page.
	res, body := s.Do(t, http.MethodPost, "/api/v1/notes", map[string]any{"title": "a"}, map[string]string{"Origin": appOrigin})
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", res.StatusCode, body)
	}
	if res.Header.Get("Access-Control-Allow-Origin") != appOrigin || res.Header.Get("X-Svc-Index") == "" {
		t.Errorf("create: Allow-Origin %q, X-Svc-Index %q", res.Header.Get("Access-Control-Allow-Origin"), res.Header.Get("X-Svc-Index"))
	}
}

func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	setCORS(t, s, map[string]any{"cors.origins": appOrigin})

	// The route needs an admin: a preflight carries no credentials and must
	// be answered before authentication.
	res, body := preflight(t, s, "/api/v1/admin/collections", appOrigin, http.MethodPatch,
		"Authorization, Content-Type,If-Match, last-event-id, X-Svc-Consistency, X-Evil, x-svc-bad_name")
	if res.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("preflight: %d %s", res.StatusCode, body)
	}
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != appOrigin {
		t.Errorf("Allow-Origin %q", got)
	}
	methods := headerList(res, "Access-Control-Allow-Methods")
	for _, m := range []string{"get", "post", "patch", "delete", "put"} {
		if !slices.Contains(methods, m) {
			t.Errorf("Allow-Methods %v lacks %s", methods, m)
		}
	}
	if got, want := headerList(res, "Access-Control-Allow-Headers"), []string{"authorization", "content-type", "if-match", "last-event-id", "x-svc-consistency"}; !slices.Equal(got, want) {
		t.Errorf("Allow-Headers %v, want %v", got, want)
	}
	if got := res.Header.Get("Access-Control-Max-Age"); got != "600" {
		t.Errorf("Max-Age %q, want the default 600", got)
	}
	for _, v := range []string{"Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"} {
		if !varies(res, v) {
			t.Errorf("preflight: no Vary: %s", v)
		}
	}
	if res.Header.Get("X-Svc-Node") == "" {
		t.Error("preflight without X-Svc-Node")
	}

	// An unlisted origin: no CORS header, a 403 envelope, no handler run.
	res, body = preflight(t, s, "/api/v1/admin/collections", evilOrigin, http.MethodPatch, "authorization")
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("unlisted preflight: %d %s", res.StatusCode, body)
	}
	apitest.CheckCommon(t, res, body)
	noCORS(t, "unlisted preflight", res)

	// A plain OPTIONS (no Access-Control-Request-Method) is no preflight.
	res, _ = s.Do(t, http.MethodOptions, "/api/v1/admin/collections", nil, map[string]string{"Origin": appOrigin})
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("plain OPTIONS: %d, want the router's 405", res.StatusCode)
	}

	// The settings override the defaults; a negative or empty max age
	// falls back to 600.
	setCORS(t, s, map[string]any{"cors.methods": "GET, POST", "cors.headers": "Authorization, X-Custom", "cors.max_age": "60"})
	res, _ = preflight(t, s, "/api/v1/notes", appOrigin, http.MethodPost, "x-custom, x-other")
	if got := res.Header.Get("Access-Control-Allow-Methods"); got != "GET, POST" {
		t.Errorf("Allow-Methods %q, want cors.methods", got)
	}
	if got := res.Header.Get("Access-Control-Allow-Headers"); got != "Authorization, X-Custom" {
		t.Errorf("Allow-Headers %q, want cors.headers", got)
	}
	if got := res.Header.Get("Access-Control-Max-Age"); got != "60" {
		t.Errorf("Max-Age %q, want 60", got)
	}
	for _, v := range []string{"-1", ""} {
		setCORS(t, s, map[string]any{"cors.max_age": v})
		res, _ = preflight(t, s, "/api/v1/notes", appOrigin, http.MethodPost, "")
		if got := res.Header.Get("Access-Control-Max-Age"); got != "600" {
			t.Errorf("Max-Age %q with cors.max_age %q, want 600", got, v)
		}
	}
}

func TestCORSWildcardAndCredentials(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	setCORS(t, s, map[string]any{"cors.origins": "*"})
	res, _ := s.Do(t, http.MethodGet, "/_/health", nil, map[string]string{"Origin": evilOrigin})
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("* without credentials: Allow-Origin %q", got)
	}
	if varies(res, "Origin") {
		t.Error("* without credentials: the answer does not vary by Origin")
	}
	if res.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Error("* without credentials: Allow-Credentials sent")
	}

	// With credentials a browser refuses "*": the origin is echoed.
	setCORS(t, s, map[string]any{"cors.credentials": true})
	res, _ = s.Do(t, http.MethodGet, "/_/health", nil, map[string]string{"Origin": evilOrigin})
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != evilOrigin {
		t.Errorf("* with credentials: Allow-Origin %q, want the origin", got)
	}
	if res.Header.Get("Access-Control-Allow-Credentials") != "true" || !varies(res, "Origin") {
		t.Errorf("* with credentials: Allow-Credentials %q, Vary %v", res.Header.Get("Access-Control-Allow-Credentials"), res.Header.Values("Vary"))
	}
	res, _ = preflight(t, s, "/api/v1/realtime", evilOrigin, http.MethodPost, "content-type")
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Credentials") != "true" || res.Header.Get("Access-Control-Allow-Origin") != evilOrigin {
		t.Errorf("credentialed preflight: %d %v", res.StatusCode, res.Header)
	}

	// A listed origin with credentials.
	setCORS(t, s, map[string]any{"cors.origins": appOrigin})
	res, _ = s.Do(t, http.MethodGet, "/_/health", nil, map[string]string{"Origin": appOrigin})
	if res.Header.Get("Access-Control-Allow-Origin") != appOrigin || res.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("listed with credentials: %v", res.Header)
	}
	res, _ = s.Do(t, http.MethodGet, "/_/health", nil, map[string]string{"Origin": evilOrigin})
	noCORS(t, "unlisted with credentials", res)
}

// TestCORSRealtimeSSE opens the SSE stream as a cross-origin EventSource
// does (GET with Origin, with or without cookies) and reads its first frame.
func TestCORSRealtimeSSE(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	setCORS(t, s, map[string]any{"cors.origins": appOrigin})
	for _, credentials := range []bool{false, true} {
		setCORS(t, s, map[string]any{"cors.credentials": credentials})
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/realtime", nil)
		req.Header.Set("Origin", appOrigin)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("credentials=%v: %d %s", credentials, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != appOrigin {
			t.Errorf("credentials=%v: Allow-Origin %q", credentials, got)
		}
		if got := res.Header.Get("Access-Control-Allow-Credentials"); (got == "true") != credentials {
			t.Errorf("credentials=%v: Allow-Credentials %q", credentials, got)
		}
		sc := bufio.NewScanner(res.Body)
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "event: connect") {
			t.Errorf("credentials=%v: first line %q", credentials, sc.Text())
		}
		cancel()
		res.Body.Close()
	}

	// The subscribe POST is preflighted (JSON body), then sent.
	res, _ := preflight(t, s, "/api/v1/realtime", appOrigin, http.MethodPost, "content-type, authorization")
	if res.StatusCode != http.StatusNoContent || !slices.Contains(headerList(res, "Access-Control-Allow-Headers"), "content-type") {
		t.Errorf("subscribe preflight: %d %v", res.StatusCode, res.Header)
	}

	// An unlisted origin is refused by the stream (403) without CORS headers.
	res, body := s.Do(t, http.MethodGet, "/api/v1/realtime", nil, map[string]string{"Origin": evilOrigin})
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("unlisted stream: %d %s", res.StatusCode, body)
	}
	noCORS(t, "unlisted stream", res)
}

// TestCORSPreflightNotRateLimited: preflights are answered before the rate
// limiter, so they neither spend nor hit a bucket, and a 429 to an allowed
// origin is readable (with Retry-After exposed).
func TestCORSPreflightNotRateLimited(t *testing.T) {
	t.Parallel()
	n := startLimited(t, "")
	n.setting(t, "cors.origins", appOrigin)
	n.setRules(t, []rule{{Label: "/api/*", Max: 3, WindowMs: 10000}})
	c := n.from(t, "127.0.0.31")
	for i := range 20 {
		res, body := preflight(t, c, "/api/v1/admin/setup/status", appOrigin, http.MethodGet, "authorization")
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("preflight %d: %d %s", i, res.StatusCode, body)
		}
		res, body = preflight(t, c, "/api/v1/admin/setup/status", evilOrigin, http.MethodGet, "authorization")
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("unlisted preflight %d: %d %s", i, res.StatusCode, body)
		}
	}
	origin := map[string]string{"Origin": appOrigin}
	burst(t, c, 3, req{method: http.MethodGet, path: statusReq.path, headers: origin})
	res, _ := c.Do(t, http.MethodGet, statusReq.path, nil, origin)
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th request: %d, want 429", res.StatusCode)
	}
	if res.Header.Get("Access-Control-Allow-Origin") != appOrigin || !slices.Contains(headerList(res, "Access-Control-Expose-Headers"), "retry-after") {
		t.Errorf("429 to an allowed origin: %v", res.Header)
	}
}
