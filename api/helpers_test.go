package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// Paths used throughout.
const (
	collectionsURL = "/api/v1/admin/collections"
	settingsURL    = "/api/v1/admin/settings"
)

// f is a field definition.
func f(name, typ string, opts ...any) map[string]any {
	m := map[string]any{"name": name, "type": typ}
	for i := 0; i+1 < len(opts); i += 2 {
		m[opts[i].(string)] = opts[i+1]
	}
	return m
}

// coll is a collection definition; rules and other members via kv pairs.
func coll(name, typ string, fields []map[string]any, kv ...any) map[string]any {
	m := map[string]any{"name": name, "type": typ, "fields": fields}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// public makes every rule "" (everyone).
func public(def map[string]any) map[string]any {
	for _, r := range []string{"view_rule", "create_rule", "update_rule", "delete_rule"} {
		def[r] = ""
	}
	return def
}

// getRecord reads one record as the admin and returns it with its ETag.
func getRecord(t testing.TB, s *apitest.Server, c, id string) (map[string]any, string) {
	t.Helper()
	res, body := s.AdminDo(t, http.MethodGet, "/api/v1/"+c+"/"+id, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("get %s/%s: %d %s", c, id, res.StatusCode, body)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, body)["data"]), res.Header.Get("ETag")
}

// listIDs lists a collection as the admin and returns the ids in order.
func listIDs(t testing.TB, s *apitest.Server, path string) []string {
	t.Helper()
	out := s.MustAdmin(t, http.StatusOK, http.MethodGet, path, nil)
	var ids []string
	for _, r := range apitest.List(t, out["data"]) {
		ids = append(ids, apitest.Obj(t, r)["id"].(string))
	}
	return ids
}
