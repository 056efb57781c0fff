package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"svcd/api/apitest"
)

// BenchmarkFlagsEvaluateHTTP is the public POST /api/v1/flags/evaluate
// over HTTP on loopback, against a node with 100 flags of ten rules each
// (the rules of engine/flags' BenchmarkEvaluate, the context reaching
// only the last rule): every flag per request, and one key per request,
// with 4 clients (docs/benchmarks.md, "Feature flags").
func BenchmarkFlagsEvaluateHTTP(b *testing.B) {
	s := apitest.Start(b, apitest.Options{})
	putSegment(b, s, "staff", test("email", "ends_with", "@staff.example"))
	rules := []any{
		map[string]any{"when": test("email", "ends_with", "@corp.example"), "variation": "on"},
		map[string]any{"when": test("country", "in", []any{"FR", "DE", "IT", "ES", "NL", "BE", "PT", "AT", "SE", "DK"}), "variation": "on"},
		map[string]any{"when": test("plan", "eq", "enterprise"), "variation": "on"},
		map[string]any{"when": map[string]any{"all": []any{test("age", "gte", 18), test("age", "lt", 21)}}, "variation": "on"},
		map[string]any{"when": map[string]any{"any": []any{test("beta", "eq", true), test("tags", "contains", "insider")}}, "variation": "on"},
		map[string]any{"when": map[string]any{"segment": "staff"}, "variation": "on"},
		map[string]any{"when": test("app_version", "regex", `^4\.[0-9]+\.[0-9]+-rc`), "variation": "on"},
		map[string]any{"when": map[string]any{"not": test("region", "exists", true)}, "variation": "on"},
		map[string]any{"when": test("score", "between", []any{90, 100}), "variation": "on"},
		map[string]any{"rollout": map[string]any{"value": 100}, "variation": "on"},
	}
	for i := range 100 {
		putFlag(b, s, map[string]any{"key": fmt.Sprintf("flag-%03d", i), "rules": rules})
	}
	ctx := map[string]any{"id": "user-12345", "email": "ann@example.com", "country": "JP", "plan": "free", "age": 34,
		"beta": false, "tags": []any{"early"}, "app_version": "4.2.0", "region": "apac", "score": 12}
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	url := s.URL + evaluateURL
	for _, tc := range []struct {
		name  string
		keys  []string
		flags int
	}{{"all 100 flags", nil, 100}, {"one key", []string{"flag-042"}, 1}} {
		body, _ := json.Marshal(map[string]any{"context": ctx, "keys": tc.keys})
		code, out, err := post(c, url, string(body), nil)
		var got struct{ Data map[string]any }
		if err != nil || code != http.StatusOK || json.Unmarshal(out, &got) != nil || len(got.Data) != tc.flags {
			b.Fatalf("%s: %d %s %v", tc.name, code, out, err)
		}
		b.Run(tc.name, func(b *testing.B) {
			var failed atomic.Int64
			b.SetParallelism(2) // 4 clients on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if code, _, err := post(c, url, string(body), nil); err != nil || code != http.StatusOK {
						failed.Add(1)
					}
				}
			})
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d requests failed", n)
			}
			rps := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(rps, "req/s")
			b.ReportMetric(rps*float64(tc.flags), "evals/s")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)*2), "clients")
		})
	}
}
