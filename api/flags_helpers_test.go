package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// Helpers of the feature flag tests.

const (
	flagsURL    = "/api/v1/admin/flags"
	segmentsURL = "/api/v1/admin/flag-segments"
	evaluateURL = "/api/v1/flags/evaluate"
)

// putFlag creates or replaces a flag as the owner and returns it.
func putFlag(t testing.TB, s *apitest.Server, def map[string]any) map[string]any {
	t.Helper()
	res, body := s.AdminDo(t, http.MethodPost, flagsURL, def)
	apitest.CheckCommon(t, res, body)
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		t.Fatalf("put flag %v: %d %s", def["key"], res.StatusCode, body)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
}

// putSegment creates or replaces a segment as the owner.
func putSegment(t testing.TB, s *apitest.Server, name string, cond any) {
	t.Helper()
	res, body := s.AdminDo(t, http.MethodPost, segmentsURL, map[string]any{"name": name, "conditions": cond})
	apitest.CheckCommon(t, res, body)
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		t.Fatalf("put segment %s: %d %s", name, res.StatusCode, body)
	}
}

// evalFlags calls the public evaluate route anonymously and returns the
// data member, requiring a 200.
func evalFlags(t testing.TB, s *apitest.Server, attrs map[string]any, keys ...string) map[string]any {
	t.Helper()
	body := map[string]any{"context": attrs}
	if len(keys) > 0 {
		body["keys"] = keys
	}
	return data(t, s, http.StatusOK, http.MethodPost, evaluateURL, body, nil)
}

// explain calls the admin evaluate of flag key.
func explain(t testing.TB, s *apitest.Server, key string, attrs map[string]any) map[string]any {
	t.Helper()
	return data(t, s, http.StatusOK, http.MethodPost, flagsURL+"/"+key+"/evaluate", map[string]any{"context": attrs}, s.AdminHeaders(t, nil))
}

// hitFlag is a bool flag that serves true when cond holds.
func hitFlag(key string, cond any) map[string]any {
	return map[string]any{"key": key, "rules": []any{map[string]any{"id": "hit", "when": cond, "variation": "on"}}}
}

// test is an attribute test condition.
func test(attr, op string, value any) map[string]any {
	return map[string]any{"attr": attr, "op": op, "value": value}
}

// ctxOf decodes a JSON object literal (a context written as JSON, so its
// numbers are what a client sends).
func ctxOf(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("context %s: %v", s, err)
	}
	return m
}
