package api_test

import (
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestFlagValidation: every refusal of a flag or segment definition is
// one 422 whose details name the member (by its path) and what is wrong,
// decided before proposing or, for what depends on other flags and
// segments, in the apply.
func TestFlagValidation(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	putFlag(t, s, map[string]any{"key": "base", "rules": []any{}})
	putFlag(t, s, map[string]any{"key": "mid", "rules": []any{map[string]any{"prerequisites": []any{map[string]any{"key": "base", "variation": "on"}}, "variation": "on"}}})
	putSegment(t, s, "seg-a", test("x", "eq", 1))
	putSegment(t, s, "seg-b", map[string]any{"segment": "seg-a"})
	rule := func(kv ...any) map[string]any {
		r := map[string]any{"variation": "on"}
		for i := 0; i < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return r
	}
	flag := func(rules ...any) map[string]any { return map[string]any{"key": "f", "rules": rules} }
	deep := any(test("a", "eq", 1))
	for range 33 {
		deep = map[string]any{"not": deep}
	}
	cases := []struct {
		name    string
		url     string
		method  string
		body    any
		status  int
		details []string // "path: fragment of the message"
	}{
		{"key missing", flagsURL, "POST", map[string]any{"rules": []any{}}, 422, []string{"key: is required"}},
		{"key pattern", flagsURL, "POST", map[string]any{"key": "a:b"}, 422, []string{"key: must be 1-128 letters"}},
		{"unknown member", flagsURL, "POST", map[string]any{"key": "f", "description": "x"}, 422, []string{"description: unknown member"}},
		{"unknown type", flagsURL, "POST", map[string]any{"key": "f", "type": "int"}, 422, []string{"type: must be one of bool, string, number, json"}},
		{"default of the wrong type", flagsURL, "POST", map[string]any{"key": "f", "type": "number", "default_value": "1"}, 422, []string{"default_value: must be a number"}},
		{"variation of the wrong type", flagsURL, "POST", map[string]any{"key": "f", "type": "string", "variations": map[string]any{"a": true}}, 422, []string{"variations.a: must be a string"}},
		{"bad variation name", flagsURL, "POST", map[string]any{"key": "f", "variations": map[string]any{"a b": true}}, 422, []string{"variations.a b: the variation name must be"}},
		{"rule serves an unknown variation", flagsURL, "POST", flag(map[string]any{"variation": "maybe"}), 422, []string{`rules.0.variation: no variation "maybe": the flag's variations are off, on`}},
		{"rule without variation", flagsURL, "POST", flag(map[string]any{"id": "x"}), 422, []string{"rules.0.variation: is required"}},
		{"duplicate rule id", flagsURL, "POST", flag(rule("id", "a"), rule("id", "a")), 422, []string{`rules.1.id: another rule has the id "a"`}},
		{"unknown rule member", flagsURL, "POST", flag(rule("if", true)), 422, []string{"rules.0.if: unknown member"}},
		{"unknown operator", flagsURL, "POST", flag(rule("when", test("a", "like", "x"))), 422, []string{`rules.0.when.op: unknown operator "like": one of eq, neq, in`}},
		{"operator missing", flagsURL, "POST", flag(rule("when", map[string]any{"attr": "a", "value": 1})), 422, []string{"rules.0.when.op: is required"}},
		{"attr missing", flagsURL, "POST", flag(rule("when", map[string]any{"op": "eq", "value": 1})), 422, []string{"rules.0.when.attr: must be the name"}},
		{"value missing", flagsURL, "POST", flag(rule("when", map[string]any{"attr": "a", "op": "eq"})), 422, []string{"rules.0.when.value: is required"}},
		{"in without an array", flagsURL, "POST", flag(rule("when", test("a", "in", "x"))), 422, []string{"rules.0.when.value: must be an array"}},
		{"starts_with a number", flagsURL, "POST", flag(rule("when", test("a", "starts_with", 1))), 422, []string{"rules.0.when.value: must be a string"}},
		{"gt an array", flagsURL, "POST", flag(rule("when", test("a", "gt", []any{1}))), 422, []string{"rules.0.when.value: must be a number or a string"}},
		{"between one bound", flagsURL, "POST", flag(rule("when", test("a", "between", []any{1}))), 422, []string{"rules.0.when.value: must be [low, high]"}},
		{"between mixed", flagsURL, "POST", flag(rule("when", test("a", "between", []any{1, "z"}))), 422, []string{"rules.0.when.value: must be [low, high]"}},
		{"between reversed", flagsURL, "POST", flag(rule("when", test("a", "between", []any{5, 1}))), 422, []string{"rules.0.when.value: low must not be above high"}},
		{"exists with a string", flagsURL, "POST", flag(rule("when", test("a", "exists", "yes"))), 422, []string{"rules.0.when.value: must be true or false"}},
		{"bad regex", flagsURL, "POST", flag(rule("when", test("a", "regex", "(x"))), 422, []string{"rules.0.when.value: is not a valid regular expression"}},
		{"contains an object", flagsURL, "POST", flag(rule("when", test("a", "contains", map[string]any{}))), 422, []string{"rules.0.when.value: must be a string, a number or a boolean"}},
		{"two shapes", flagsURL, "POST", flag(rule("when", map[string]any{"attr": "a", "op": "eq", "value": 1, "all": []any{}})), 422, []string{"rules.0.when: mixes all, attr"}},
		{"no shape", flagsURL, "POST", flag(rule("when", map[string]any{})), 422, []string{"rules.0.when: must be a condition"}},
		{"all not an array", flagsURL, "POST", flag(rule("when", map[string]any{"all": test("a", "eq", 1)})), 422, []string{"rules.0.when.all: must be an array of conditions"}},
		{"nested problem", flagsURL, "POST", flag(rule("when", map[string]any{"any": []any{test("a", "eq", 1), map[string]any{"not": test("b", "nope", 1)}}})), 422, []string{`rules.0.when.any.1.not.op: unknown operator "nope"`}},
		{"too deep", flagsURL, "POST", flag(rule("when", deep)), 422, []string{"conditions nest deeper than 32 levels"}},
		{"rollout over 100", flagsURL, "POST", flag(rule("rollout", map[string]any{"value": 101})), 422, []string{"rules.0.rollout.value: must be a percentage from 0 to 100"}},
		{"rollout without value", flagsURL, "POST", flag(rule("rollout", map[string]any{"sticky": "id"})), 422, []string{"rules.0.rollout.value: must be a percentage"}},
		{"rollout empty sticky", flagsURL, "POST", flag(rule("rollout", map[string]any{"value": 5, "sticky": ""})), 422, []string{"rules.0.rollout.sticky: must be the name of a context attribute"}},
		{"own prerequisite", flagsURL, "POST", flag(rule("prerequisites", []any{map[string]any{"key": "f", "variation": "on"}})), 422, []string{"rules.0.prerequisites.0.key: a flag cannot be its own prerequisite"}},
		{"prerequisite without variation", flagsURL, "POST", flag(rule("prerequisites", []any{map[string]any{"key": "base"}})), 422, []string{"rules.0.prerequisites.0.variation: is required"}},
		// Decided in the apply, against the committed flags and segments.
		{"unknown prerequisite flag", flagsURL, "POST", flag(rule("prerequisites", []any{map[string]any{"key": "ghost", "variation": "on"}})), 422, []string{`rules.0.prerequisites.0.key: no flag "ghost"`}},
		{"unknown prerequisite variation", flagsURL, "POST", flag(rule("prerequisites", []any{map[string]any{"key": "base", "variation": "maybe"}})), 422, []string{`rules.0.prerequisites.0.variation: flag "base" has no variation "maybe" (it has off, on)`}},
		{"unknown segment", flagsURL, "POST", flag(rule("when", map[string]any{"all": []any{map[string]any{"segment": "ghost"}}})), 422, []string{`rules.0.when.all.0.segment: no segment "ghost"`}},
		{"prerequisite cycle", flagsURL + "/base", "PATCH", map[string]any{"rules": []any{rule("prerequisites", []any{map[string]any{"key": "mid", "variation": "on"}})}}, 422, []string{"rules.0.prerequisites.0: the prerequisites form a cycle: base → mid → base"}},
		{"dropping a needed variation", flagsURL + "/base", "PATCH", map[string]any{"variations": map[string]any{"yes": true, "no": false}}, 422, []string{`variations: other flags have prerequisites on variations this definition drops: flag "mid" needs "on"`}},
		{"key change", flagsURL + "/base", "PATCH", map[string]any{"key": "other"}, 422, []string{"key: cannot be changed"}},
		{"patch of an unknown flag", flagsURL + "/ghost", "PATCH", map[string]any{"enabled": false}, 404, nil},
		{"patch to an invalid flag", flagsURL + "/base", "PATCH", map[string]any{"type": "string"}, 422, []string{"variations.on: must be a string", "default_value: must be a string"}},
		{"not JSON", flagsURL, "POST", "{nope", 400, nil},
		{"segment without conditions", segmentsURL, "POST", map[string]any{"name": "s"}, 422, []string{"conditions: is required"}},
		{"segment name", segmentsURL, "POST", map[string]any{"name": "a/b", "conditions": test("a", "eq", 1)}, 422, []string{"name: must be 1-128 letters"}},
		{"segment references itself", segmentsURL, "POST", map[string]any{"name": "s", "conditions": map[string]any{"not": map[string]any{"segment": "s"}}}, 422, []string{"conditions.not.segment: a segment cannot reference itself"}},
		{"segment cycle", segmentsURL + "/seg-a", "PATCH", map[string]any{"conditions": map[string]any{"segment": "seg-b"}}, 422, []string{"conditions.segment: the segments form a cycle: seg-a → seg-b → seg-a"}},
		{"segment unknown operator", segmentsURL, "POST", map[string]any{"name": "s", "conditions": test("a", "~", 1)}, 422, []string{`conditions.op: unknown operator "~"`}},
		{"evaluate: context not an object", evaluateURL, "POST", map[string]any{"context": []any{1}}, 422, []string{"context: must be an object"}},
		{"evaluate: keys not strings", evaluateURL, "POST", map[string]any{"keys": []any{1}}, 422, []string{"keys: must be an array of flag keys"}},
		{"evaluate: unknown member", evaluateURL, "POST", map[string]any{"ctx": map[string]any{}}, 422, []string{"ctx: unknown member"}},
		{"admin evaluate: keys", flagsURL + "/base/evaluate", "POST", map[string]any{"keys": []any{"x"}}, 422, []string{"keys: unknown member"}},
	}
	admin := s.AdminHeaders(t, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, body := s.Do(t, c.method, c.url, c.body, admin)
			apitest.CheckCommon(t, res, body)
			if res.StatusCode != c.status {
				t.Fatalf("%d, want %d: %s", res.StatusCode, c.status, body)
			}
			if len(c.details) == 0 {
				return
			}
			details, _ := apitest.DecodeMap(t, body)["details"].(map[string]any)
			for _, d := range c.details {
				path, frag, ok := strings.Cut(d, ": ")
				if !ok { // a fragment of any message
					found := false
					for _, m := range details {
						found = found || strings.Contains(m.(string), d)
					}
					if !found {
						t.Errorf("no detail says %q: %s", d, body)
					}
					continue
				}
				if msg, _ := details[path].(string); !strings.Contains(msg, frag) {
					t.Errorf("details[%q] = %q, want %q: %s", path, msg, frag, body)
				}
			}
		})
	}
	// Nothing refused was written.
	if l := apitest.List(t, apitest.DecodeMap(t, must(t, s, http.MethodGet, flagsURL, admin))["data"]); len(l) != 2 {
		t.Errorf("%d flags after the refusals, want 2", len(l))
	}
	if got := apitest.Obj(t, data(t, s, 200, "GET", flagsURL+"/base", nil, admin)); len(apitest.List(t, got["rules"])) != 0 {
		t.Errorf("base changed: %v", got)
	}
}
