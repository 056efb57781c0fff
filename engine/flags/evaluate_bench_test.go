package flags_test

import (
	"fmt"
	"testing"
)

// benchRules are ten rules of the usual kinds (attribute tests of several
// operators, combinators, a segment, a prerequisite-free rollout); the
// benchmark context matches none but the last, so every evaluation walks
// all ten.
func benchRules() []any {
	test := func(attr, op string, value any) map[string]any {
		return map[string]any{"attr": attr, "op": op, "value": value}
	}
	rule := func(when any) map[string]any { return map[string]any{"when": when, "variation": "on"} }
	return []any{
		rule(test("email", "ends_with", "@corp.example")),
		rule(test("country", "in", []any{"FR", "DE", "IT", "ES", "NL", "BE", "PT", "AT", "SE", "DK"})),
		rule(test("plan", "eq", "enterprise")),
		rule(map[string]any{"all": []any{test("age", "gte", 18), test("age", "lt", 21)}}),
		rule(map[string]any{"any": []any{test("beta", "eq", true), test("tags", "contains", "insider")}}),
		rule(map[string]any{"segment": "staff"}),
		rule(test("app_version", "regex", `^4\.[0-9]+\.[0-9]+-rc`)),
		rule(map[string]any{"not": test("region", "exists", true)}),
		rule(test("score", "between", []any{90, 100})),
		map[string]any{"rollout": map[string]any{"value": 100, "sticky": "id"}, "variation": "on"},
	}
}

// BenchmarkEvaluate measures evaluations per second on one node's
// snapshot: every flag for one context, with 1 and with 100 flags of ten
// rules each (docs/benchmarks.md reports the figures).
func BenchmarkEvaluate(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("flags=%d/rules=10", n), func(b *testing.B) {
			v := newEnv(b)
			v.segment("staff", map[string]any{"attr": "email", "op": "ends_with", "value": "@staff.example"})
			for i := range n {
				v.put(map[string]any{"key": fmt.Sprintf("flag-%03d", i), "rules": benchRules()})
			}
			attrs := map[string]any{
				"id": "user-12345", "email": "ann@example.com", "country": "JP", "plan": "free", "age": float64(34),
				"beta": false, "tags": []any{"early"}, "app_version": "4.2.0", "region": "apac", "score": float64(12),
			}
			out, err := v.f.Evaluate(v.ctx, attrs, nil)
			if err != nil || len(out) != n {
				b.Fatalf("%d flags evaluated, want %d: %v", len(out), n, err)
			}
			for k, val := range out {
				if val != true {
					b.Fatalf("%s = %v: the benchmark context must reach the last rule", k, val)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := v.f.Evaluate(v.ctx, attrs, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "evals/s")
		})
	}
}
