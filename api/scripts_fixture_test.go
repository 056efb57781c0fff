package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Shared by the tests of hooks, custom routes and the helpers
// (engine/jsvm).

const (
	hooksURL  = "/api/v1/admin/hooks"
	routesURL = "/api/v1/admin/routes"
)

// mkHook creates a hook as the admin and returns its id.
func mkHook(t testing.TB, s *apitest.Server, coll, event, code string, kv ...any) string {
	t.Helper()
	body := map[string]any{"collection": coll, "event": event, "code": code}
	for i := 0; i+1 < len(kv); i += 2 {
		body[kv[i].(string)] = kv[i+1]
	}
	out := s.MustAdmin(t, http.StatusCreated, http.MethodPost, hooksURL, body)
	return apitest.Obj(t, out["data"])["id"].(string)
}

// mkRoute creates a custom route as the admin and returns its id.
func mkRoute(t testing.TB, s *apitest.Server, method, path, code string) string {
	t.Helper()
	out := s.MustAdmin(t, http.StatusCreated, http.MethodPost, routesURL, map[string]any{"method": method, "path": path, "code": code})
	return apitest.Obj(t, out["data"])["id"].(string)
}

// call sends a request to a custom route and decodes the JSON answer
// (nil for an empty body).
func call(t testing.TB, s *apitest.Server, method, path string, body any, headers map[string]string) (int, any, *http.Response) {
	t.Helper()
	res, b := s.Do(t, method, "/api/v1/custom/"+path, body, headers)
	apitest.CheckCommon(t, res, b)
	if len(b) == 0 {
		return res.StatusCode, nil, res
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %q", method, path, b)
	}
	return res.StatusCode, v, res
}

// callOK is call that fails the test unless the status is 200, and
// returns the answer as an object.
func callOK(t testing.TB, s *apitest.Server, method, path string, body any, headers map[string]string) map[string]any {
	t.Helper()
	st, v, _ := call(t, s, method, path, body, headers)
	if st != http.StatusOK {
		t.Fatalf("%s %s: %d %v", method, path, st, v)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s %s: answer %v is not an object", method, path, v)
	}
	return m
}

// eventually polls cond for up to 10 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listAll lists a collection as the admin (up to 500 records).
func listAll(t testing.TB, s *apitest.Server, coll string) []map[string]any {
	t.Helper()
	out := s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/"+coll+"?perPage=500&sort=created", nil)
	var recs []map[string]any
	for _, r := range apitest.List(t, out["data"]) {
		recs = append(recs, apitest.Obj(t, r))
	}
	return recs
}
