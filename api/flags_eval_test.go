package api_test

import (
	"fmt"
	"testing"

	"svcd/api/apitest"
)

// condCase is one condition and contexts it must and must not match.
type condCase struct {
	name string
	cond any
	yes  []string // contexts (JSON) that match
	no   []string // contexts that do not
}

// runCondCases makes one flag per case, then evaluates each context
// through the public route.
func runCondCases(t *testing.T, s *apitest.Server, cases []condCase) {
	t.Helper()
	for i, c := range cases {
		putFlag(t, s, hitFlag(fmt.Sprintf("c%d", i), c.cond))
	}
	for i, c := range cases {
		key := fmt.Sprintf("c%d", i)
		t.Run(c.name, func(t *testing.T) {
			for _, ctx := range c.yes {
				if got := evalFlags(t, s, ctxOf(t, ctx), key)[key]; got != true {
					t.Errorf("%v with %s: %v, want a match", c.cond, ctx, got)
				}
			}
			for _, ctx := range c.no {
				if got := evalFlags(t, s, ctxOf(t, ctx), key)[key]; got != false {
					t.Errorf("%v with %s: %v, want no match", c.cond, ctx, got)
				}
			}
		})
	}
}

// TestFlagOperators: every operator of SPEC.md on the types it takes,
// on mismatched types and on an absent attribute.
func TestFlagOperators(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	runCondCases(t, s, []condCase{
		{"eq string", test("plan", "eq", "pro"), []string{`{"plan":"pro"}`}, []string{`{"plan":"Pro"}`, `{"plan":"free"}`, `{}`, `{"plan":null}`}},
		{"eq number", test("n", "eq", 3), []string{`{"n":3}`, `{"n":3.0}`}, []string{`{"n":"3"}`, `{"n":3.5}`, `{}`}},
		{"eq bool", test("beta", "eq", true), []string{`{"beta":true}`}, []string{`{"beta":"true"}`, `{"beta":false}`, `{}`}},
		{"eq null", test("x", "eq", nil), []string{`{"x":null}`}, []string{`{}`, `{"x":0}`, `{"x":""}`}},
		{"eq object", test("o", "eq", map[string]any{"a": 1, "b": []any{"x"}}), []string{`{"o":{"b":["x"],"a":1.0}}`}, []string{`{"o":{"a":1}}`, `{"o":{"a":1,"b":["x"],"c":2}}`}},
		{"neq", test("plan", "neq", "pro"), []string{`{"plan":"free"}`, `{}`, `{"plan":7}`}, []string{`{"plan":"pro"}`}},
		{"in strings", test("country", "in", []any{"FR", "DE"}), []string{`{"country":"FR"}`, `{"country":"DE"}`, `{"country":["US","DE"]}`}, []string{`{"country":"US"}`, `{"country":"fr"}`, `{}`, `{"country":["US"]}`}},
		{"in numbers and others", test("v", "in", []any{1, 2.5, true, nil}), []string{`{"v":1}`, `{"v":2.5}`, `{"v":true}`, `{"v":null}`}, []string{`{"v":3}`, `{"v":"1"}`, `{"v":false}`, `{}`}},
		{"not_in", test("country", "not_in", []any{"FR", "DE"}), []string{`{"country":"US"}`, `{}`}, []string{`{"country":"FR"}`, `{"country":["US","FR"]}`}},
		{"contains substring", test("email", "contains", "@corp."), []string{`{"email":"a@corp.example"}`}, []string{`{"email":"a@example.com"}`, `{}`, `{"email":5}`}},
		{"contains element", test("tags", "contains", "vip"), []string{`{"tags":["a","vip"]}`}, []string{`{"tags":["a"]}`, `{"tags":[]}`}},
		{"contains number element", test("ids", "contains", 7), []string{`{"ids":[1,7]}`}, []string{`{"ids":[1,"7"]}`, `{"ids":"17"}`}},
		{"starts_with", test("path", "starts_with", "/admin"), []string{`{"path":"/admin/x"}`, `{"path":"/admin"}`}, []string{`{"path":"/api/admin"}`, `{"path":1}`, `{}`}},
		{"ends_with", test("email", "ends_with", "@corp.example"), []string{`{"email":"bo@corp.example"}`}, []string{`{"email":"bo@corp.example.com"}`, `{}`}},
		{"gt number", test("age", "gt", 18), []string{`{"age":19}`, `{"age":18.5}`}, []string{`{"age":18}`, `{"age":"19"}`, `{}`}},
		{"gte number", test("age", "gte", 18), []string{`{"age":18}`, `{"age":40}`}, []string{`{"age":17.99}`}},
		{"lt number", test("age", "lt", 18), []string{`{"age":17}`, `{"age":-1}`}, []string{`{"age":18}`, `{}`}},
		{"lte number", test("age", "lte", 18), []string{`{"age":18}`}, []string{`{"age":18.01}`}},
		{"gt string", test("version", "gt", "2024-01-01"), []string{`{"version":"2024-05-01"}`}, []string{`{"version":"2023-12-31"}`, `{"version":20240501}`}},
		{"lte string", test("version", "lte", "b"), []string{`{"version":"a"}`, `{"version":"b"}`}, []string{`{"version":"ba"}`}},
		{"between numbers", test("score", "between", []any{10, 20}), []string{`{"score":10}`, `{"score":15.5}`, `{"score":20}`}, []string{`{"score":9.9}`, `{"score":21}`, `{"score":"15"}`, `{}`}},
		{"between strings", test("day", "between", []any{"2024-01-01", "2024-12-31"}), []string{`{"day":"2024-06-01"}`}, []string{`{"day":"2025-01-01"}`}},
		{"exists", map[string]any{"attr": "email", "op": "exists"}, []string{`{"email":"a@b.c"}`, `{"email":""}`, `{"email":false}`}, []string{`{}`, `{"email":null}`}},
		{"exists true", test("email", "exists", true), []string{`{"email":"x"}`}, []string{`{}`}},
		{"exists false", test("email", "exists", false), []string{`{}`, `{"email":null}`}, []string{`{"email":"x"}`}},
		{"regex", test("ua", "regex", `^Mozilla/5\.0 .*(iPhone|iPad)`), []string{`{"ua":"Mozilla/5.0 (iPhone; CPU)"}`}, []string{`{"ua":"Mozilla/5.0 (X11)"}`, `{"ua":5}`, `{}`}},
		{"regex unanchored", test("email", "regex", `corp`), []string{`{"email":"a@corp.example"}`}, []string{`{"email":"a@example.com"}`}},
	})
}

// TestFlagCombinators: all, any, not and segments (nested, shared by
// rules, referencing each other), and an empty all and any.
func TestFlagCombinators(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	putSegment(t, s, "staff", test("email", "ends_with", "@corp.example"))
	putSegment(t, s, "eu", test("country", "in", []any{"FR", "DE"}))
	putSegment(t, s, "eu-staff", map[string]any{"all": []any{map[string]any{"segment": "staff"}, map[string]any{"segment": "eu"}}})
	adult := test("age", "gte", 18)
	fr := test("country", "eq", "FR")
	runCondCases(t, s, []condCase{
		{"all", map[string]any{"all": []any{adult, fr}}, []string{`{"age":20,"country":"FR"}`}, []string{`{"age":20,"country":"DE"}`, `{"age":10,"country":"FR"}`, `{}`}},
		{"all empty", map[string]any{"all": []any{}}, []string{`{}`, `{"x":1}`}, nil},
		{"any", map[string]any{"any": []any{adult, fr}}, []string{`{"age":20}`, `{"country":"FR"}`, `{"age":20,"country":"FR"}`}, []string{`{"age":10,"country":"DE"}`, `{}`}},
		{"any empty", map[string]any{"any": []any{}}, nil, []string{`{}`, `{"x":1}`}},
		{"not", map[string]any{"not": fr}, []string{`{"country":"DE"}`, `{}`}, []string{`{"country":"FR"}`}},
		{"not not", map[string]any{"not": map[string]any{"not": fr}}, []string{`{"country":"FR"}`}, []string{`{"country":"DE"}`}},
		{"nested", map[string]any{"any": []any{
			map[string]any{"all": []any{adult, map[string]any{"not": fr}}},
			test("vip", "eq", true),
		}}, []string{`{"age":30,"country":"DE"}`, `{"vip":true,"country":"FR","age":3}`}, []string{`{"age":30,"country":"FR"}`, `{"age":3}`}},
		{"segment", map[string]any{"segment": "staff"}, []string{`{"email":"bo@corp.example"}`}, []string{`{"email":"bo@example.com"}`, `{}`}},
		{"segment of segments", map[string]any{"segment": "eu-staff"}, []string{`{"email":"bo@corp.example","country":"DE"}`}, []string{`{"email":"bo@corp.example","country":"US"}`, `{"country":"DE"}`}},
		{"not a segment", map[string]any{"not": map[string]any{"segment": "eu"}}, []string{`{"country":"US"}`, `{}`}, []string{`{"country":"FR"}`}},
	})
	// Changing a segment changes every flag that uses it, at once.
	data(t, s, 200, "PATCH", segmentsURL+"/staff", map[string]any{"conditions": test("email", "ends_with", "@staff.example")}, s.AdminHeaders(t, nil))
	got := evalFlags(t, s, ctxOf(t, `{"email":"bo@staff.example","country":"FR"}`))
	for i, want := range map[int]bool{7: true, 8: true} {
		if k := fmt.Sprintf("c%d", i); got[k] != want {
			t.Errorf("after the segment changed, %s = %v, want %v", k, got[k], want)
		}
	}
}

// TestFlagRulesAndReasons: the first matching rule wins; the admin
// evaluate says which rule and why (rule_match, no_match, disabled);
// typed flags serve their variations; a disabled flag serves its default
// however its rules would match.
func TestFlagRulesAndReasons(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	putFlag(t, s, map[string]any{
		"key": "banner", "type": "string", "default_value": "none",
		"variations": map[string]any{"red": "#f00", "blue": "#00f", "green": "#0f0"},
		"rules": []any{
			map[string]any{"id": "staff", "when": test("email", "ends_with", "@corp.example"), "variation": "red"},
			map[string]any{"id": "france", "when": test("country", "eq", "FR"), "variation": "blue"},
			map[string]any{"when": test("country", "in", []any{"FR", "DE"}), "variation": "green"},
		},
	})
	for _, c := range []struct {
		ctx                      string
		value, variation, ruleID any
		reason                   string
	}{
		{`{"email":"a@corp.example","country":"FR"}`, "#f00", "red", "staff", "rule_match"},
		{`{"country":"FR"}`, "#00f", "blue", "france", "rule_match"},
		{`{"country":"DE"}`, "#0f0", "green", "r1", "rule_match"},
		{`{"country":"US"}`, "none", nil, nil, "no_match"},
		{`{}`, "none", nil, nil, "no_match"},
	} {
		got := explain(t, s, "banner", ctxOf(t, c.ctx))
		want := map[string]any{"key": "banner", "value": c.value, "variation": c.variation, "rule_id": c.ruleID, "reason": c.reason}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", c.ctx, got, want)
		}
		if pub := evalFlags(t, s, ctxOf(t, c.ctx), "banner"); pub["banner"] != c.value {
			t.Errorf("%s: the public route serves %v, the admin evaluate %v", c.ctx, pub["banner"], c.value)
		}
	}
	data(t, s, 200, "PATCH", flagsURL+"/banner", map[string]any{"enabled": false}, s.AdminHeaders(t, nil))
	got := explain(t, s, "banner", ctxOf(t, `{"country":"FR"}`))
	if got["reason"] != "disabled" || got["value"] != "none" || got["rule_id"] != nil || got["variation"] != nil {
		t.Errorf("disabled: %v", got)
	}
	putFlag(t, s, map[string]any{"key": "limits", "type": "json", "default_value": map[string]any{"max": 10},
		"variations": map[string]any{"big": map[string]any{"max": 1000, "burst": []any{1, 2}}},
		"rules":      []any{map[string]any{"when": test("plan", "eq", "pro"), "variation": "big"}}})
	putFlag(t, s, map[string]any{"key": "ratio", "type": "number", "default_value": 0.5,
		"variations": map[string]any{"more": 0.9}, "rules": []any{map[string]any{"when": test("plan", "eq", "pro"), "variation": "more"}}})
	all := evalFlags(t, s, ctxOf(t, `{"plan":"pro"}`))
	if fmt.Sprint(all) != fmt.Sprint(map[string]any{"banner": "none", "limits": map[string]any{"burst": []any{1.0, 2.0}, "max": 1000.0}, "ratio": 0.9}) {
		t.Errorf("every flag for a pro plan: %v", all)
	}
	if got := evalFlags(t, s, ctxOf(t, `{}`), "ratio", "nope", "limits"); fmt.Sprint(got) != fmt.Sprint(map[string]any{"limits": map[string]any{"max": 10.0}, "ratio": 0.5}) {
		t.Errorf("keys ratio, nope, limits: %v (an unknown key is left out)", got)
	}
	data(t, s, 404, "POST", flagsURL+"/nope/evaluate", map[string]any{"context": map[string]any{}}, s.AdminHeaders(t, nil))
}

// TestFlagPrerequisites: a rule with prerequisites matches only when each
// prerequisite flag serves the named variation's value for the same
// context, through chains; a disabled prerequisite counts by the value it
// serves.
func TestFlagPrerequisites(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	putFlag(t, s, map[string]any{"key": "checkout-v2", "rules": []any{map[string]any{"when": test("country", "in", []any{"FR", "DE"}), "variation": "on"}}})
	putFlag(t, s, map[string]any{"key": "express-pay", "type": "string", "default_value": "off",
		"variations": map[string]any{"apple": "apple-pay", "card": "card"},
		"rules": []any{
			map[string]any{"id": "apple", "prerequisites": []any{map[string]any{"key": "checkout-v2", "variation": "on"}}, "when": test("os", "eq", "ios"), "variation": "apple"},
			map[string]any{"id": "card", "prerequisites": []any{map[string]any{"key": "checkout-v2", "variation": "on"}}, "variation": "card"},
		}})
	putFlag(t, s, map[string]any{"key": "one-click", "rules": []any{
		map[string]any{"prerequisites": []any{map[string]any{"key": "express-pay", "variation": "apple"}, map[string]any{"key": "checkout-v2", "variation": "on"}}, "variation": "on"},
	}})
	for ctx, want := range map[string]map[string]any{
		`{"country":"FR","os":"ios"}`:     {"checkout-v2": true, "express-pay": "apple-pay", "one-click": true},
		`{"country":"FR","os":"android"}`: {"checkout-v2": true, "express-pay": "card", "one-click": false},
		`{"country":"US","os":"ios"}`:     {"checkout-v2": false, "express-pay": "off", "one-click": false},
	} {
		if got := evalFlags(t, s, ctxOf(t, ctx)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", ctx, got, want)
		}
	}
	if got := explain(t, s, "express-pay", ctxOf(t, `{"country":"US","os":"ios"}`)); got["reason"] != "no_match" {
		t.Errorf("prerequisite failing: %v", got)
	}
	// Disabled with default true: checkout-v2 serves true, the value of
	// its variation on, so the prerequisite holds for everyone.
	data(t, s, 200, "PATCH", flagsURL+"/checkout-v2", map[string]any{"enabled": false, "default_value": true}, s.AdminHeaders(t, nil))
	if got := evalFlags(t, s, ctxOf(t, `{"country":"US","os":"ios"}`)); got["express-pay"] != "apple-pay" || got["one-click"] != true {
		t.Errorf("prerequisite disabled serving true: %v", got)
	}
}
