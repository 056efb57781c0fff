package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestFlagAdminRoutes: create (201) and upsert (200) with the shape of
// CONTRACT.md and its defaults filled in, read, list by key, patch some
// members, delete (204, 409 while needed), segments alike; writes answer
// X-Svc-Index; every write is audited, the admin evaluate as
// flags.evaluate.
func TestFlagAdminRoutes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	admin := s.AdminHeaders(t, nil)
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "empty list", Admin: true, URL: flagsURL, ExpectedStatus: 200, ExpectedContent: []string{`{"data":[]}`}},
		{Name: "create with defaults", Admin: true, Method: "POST", URL: flagsURL, Body: map[string]any{"key": "dark-mode"},
			ExpectedStatus: 201, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			ExpectedContent: []string{`"key":"dark-mode","type":"bool","default_value":false,"variations":{"off":false,"on":true},"rules":[],"enabled":true,"created":`}},
		{Name: "create a typed flag", Admin: true, Method: "POST", URL: flagsURL, Body: map[string]any{
			"key": "theme", "type": "string", "default_value": "light", "variations": map[string]any{"dark": "dark", "contrast": "high-contrast"},
			"rules": []any{map[string]any{"when": test("os", "eq", "macos"), "variation": "dark"}, map[string]any{"id": "a11y", "when": test("a11y", "eq", true), "variation": "contrast"}}},
			ExpectedStatus:  201,
			ExpectedContent: []string{`"rules":[{"id":"r1","when":{"attr":"os","op":"eq","value":"macos"},"variation":"dark"},{"id":"a11y","when":{"attr":"a11y","op":"eq","value":true},"variation":"contrast"}]`}},
		{Name: "upsert replaces", Admin: true, Method: "POST", URL: flagsURL, Body: map[string]any{"key": "dark-mode", "enabled": false, "default_value": true},
			ExpectedStatus: 200, ExpectedContent: []string{`"default_value":true`, `"enabled":false`}},
		{Name: "read one", Admin: true, URL: flagsURL + "/theme", ExpectedStatus: 200, ExpectedContent: []string{`"key":"theme"`, `"default_value":"light"`}},
		{Name: "read unknown", Admin: true, URL: flagsURL + "/nope", ExpectedStatus: 404, ExpectedContent: []string{`"error":"The flag wasn't found"`}},
		{Name: "list by key", Admin: true, URL: flagsURL, ExpectedStatus: 200, AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
			var keys []string
			for _, f := range apitest.List(t, apitest.DecodeMap(t, body)["data"]) {
				keys = append(keys, apitest.Obj(t, f)["key"].(string))
			}
			if strings.Join(keys, ",") != "dark-mode,theme" {
				t.Errorf("keys %v", keys)
			}
		}},
		{Name: "patch keeps the rest", Admin: true, Method: "PATCH", URL: flagsURL + "/theme", Body: map[string]any{"default_value": "sepia"},
			ExpectedStatus: 200, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			ExpectedContent: []string{`"default_value":"sepia"`, `"id":"a11y"`, `"variations":{"contrast":"high-contrast","dark":"dark"}`}},
		{Name: "segment create", Admin: true, Method: "POST", URL: segmentsURL, Body: map[string]any{"name": "staff", "conditions": test("email", "ends_with", "@corp.example")},
			ExpectedStatus: 201, ExpectedContent: []string{`{"data":{"name":"staff","conditions":{"attr":"email","op":"ends_with","value":"@corp.example"},"created":`}},
		{Name: "segment upsert", Admin: true, Method: "POST", URL: segmentsURL, Body: map[string]any{"name": "staff", "conditions": test("email", "ends_with", "@staff.example")},
			ExpectedStatus: 200, ExpectedContent: []string{`"value":"@staff.example"`}},
		{Name: "segment patch", Admin: true, Method: "PATCH", URL: segmentsURL + "/staff", Body: map[string]any{"conditions": map[string]any{"any": []any{test("email", "ends_with", "@staff.example"), test("staff", "eq", true)}}},
			ExpectedStatus: 200, ExpectedContent: []string{`"conditions":{"any":[`}},
		{Name: "segment read", Admin: true, URL: segmentsURL + "/staff", ExpectedStatus: 200, ExpectedContent: []string{`"name":"staff"`}},
		{Name: "segment list", Admin: true, URL: segmentsURL, ExpectedStatus: 200, ExpectedContent: []string{`{"data":[{"name":"staff"`}},
		{Name: "segment unknown", Admin: true, URL: segmentsURL + "/nope", ExpectedStatus: 404},
		{Name: "flag using the segment and theme", Admin: true, Method: "POST", URL: flagsURL, Body: map[string]any{"key": "staff-theme", "rules": []any{
			map[string]any{"when": map[string]any{"segment": "staff"}, "prerequisites": []any{map[string]any{"key": "dark-mode", "variation": "on"}}, "variation": "on"}}},
			ExpectedStatus: 201},
		{Name: "delete a needed flag", Admin: true, Method: "DELETE", URL: flagsURL + "/dark-mode", ExpectedStatus: 409,
			ExpectedContent: []string{`"error":"Other flags have this flag as a prerequisite; change them first"`, `"details":{"flags":["staff-theme"]}`}},
		{Name: "delete a used segment", Admin: true, Method: "DELETE", URL: segmentsURL + "/staff", ExpectedStatus: 409,
			ExpectedContent: []string{`"details":{"flags":["staff-theme"]}`}},
		{Name: "delete the dependent", Admin: true, Method: "DELETE", URL: flagsURL + "/staff-theme", ExpectedStatus: 204, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"}},
		{Name: "then the prerequisite", Admin: true, Method: "DELETE", URL: flagsURL + "/dark-mode", ExpectedStatus: 204},
		{Name: "then the segment", Admin: true, Method: "DELETE", URL: segmentsURL + "/staff", ExpectedStatus: 204},
		{Name: "delete unknown", Admin: true, Method: "DELETE", URL: flagsURL + "/dark-mode", ExpectedStatus: 404},
		{Name: "delete unknown segment", Admin: true, Method: "DELETE", URL: segmentsURL + "/staff", ExpectedStatus: 404},
		{Name: "admin evaluate", Admin: true, Method: "POST", URL: flagsURL + "/theme/evaluate", Body: map[string]any{"context": map[string]any{"os": "macos"}},
			ExpectedStatus: 200, ExpectedContent: []string{`{"data":{"key":"theme","value":"dark","variation":"dark","rule_id":"r1","reason":"rule_match"}}`}},
		{Name: "admin evaluate, empty body", Admin: true, Method: "POST", URL: flagsURL + "/theme/evaluate",
			ExpectedStatus: 200, ExpectedContent: []string{`"value":"sepia","variation":null,"rule_id":null,"reason":"no_match"`}},
	})
	rows := apitest.List(t, apitest.Obj(t, apitest.DecodeMap(t, must(t, s, http.MethodGet, "/api/v1/admin/audit-log?perPage=100", admin))["data"])["data"])
	var actions []string
	for _, r := range rows {
		e := apitest.Obj(t, r)
		actions = append(actions, fmt.Sprintf("%s %s %v", e["action"], e["target"], e["status"]))
	}
	got := strings.Join(actions, "\n")
	for _, want := range []string{"flags.create  201", "flags.update theme 200", "flags.delete dark-mode 409", "flags.delete staff-theme 204",
		"flag_segments.create  201", "flag_segments.update staff 200", "flag_segments.delete staff 204", "flags.evaluate theme 200"} {
		if !strings.Contains(got, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, got)
		}
	}
}

// TestFlagPublicEvaluate: anyone may evaluate, signed in or not; the
// answer is {key: value} and nothing else: no rules, conditions,
// variations names, reasons or segment contents; disabled flags serve
// their default; keys narrows the answer.
func TestFlagPublicEvaluate(t *testing.T) {
	t.Parallel()
	s := startWithUsers(t)
	putSegment(t, s, "insiders", test("email", "ends_with", "@secret-partner.example"))
	putFlag(t, s, map[string]any{"key": "launch", "type": "string", "default_value": "hidden",
		"variations": map[string]any{"visible-variation": "shown"},
		"rules": []any{map[string]any{"id": "internal-rule-id", "when": map[string]any{"segment": "insiders"}, "variation": "visible-variation"},
			map[string]any{"rollout": map[string]any{"value": 0, "sticky": "private_attr"}, "variation": "visible-variation"}}})
	putFlag(t, s, map[string]any{"key": "off-flag", "enabled": false, "default_value": true, "rules": []any{map[string]any{"variation": "off"}}})
	secrets := []string{"rules", "rule_id", "reason", "variation", "internal-rule-id", "secret-partner", "insiders", "private_attr", "rollout", "when", "segment", "enabled"}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "anonymous", Method: "POST", URL: evaluateURL, Body: map[string]any{"context": map[string]any{"email": "a@secret-partner.example"}},
			ExpectedStatus: 200, ExpectedContent: []string{`{"data":{"launch":"shown","off-flag":true}}`}, NotExpectedContent: secrets},
		{Name: "signed-in user, no match", Method: "POST", URL: evaluateURL, Headers: userHeaders("u1"), Body: map[string]any{"context": map[string]any{"email": "a@b.c"}},
			ExpectedStatus: 200, ExpectedContent: []string{`{"data":{"launch":"hidden","off-flag":true}}`}, NotExpectedContent: secrets},
		{Name: "keys", Method: "POST", URL: evaluateURL, Body: map[string]any{"keys": []string{"off-flag", "ghost"}},
			ExpectedStatus: 200, ExpectedContent: []string{`{"data":{"off-flag":true}}`}},
		{Name: "empty body", Method: "POST", URL: evaluateURL, ExpectedStatus: 200, ExpectedContent: []string{`{"data":{"launch":"hidden","off-flag":true}}`}},
		{Name: "not an object", Method: "POST", URL: evaluateURL, Body: "[1]", ExpectedStatus: 400, NotExpectedContent: secrets[1:]},
		// GET falls to the record routes: "flags" is a reserved name, no
		// collection has it.
		{Name: "GET is not served", Method: "GET", URL: evaluateURL, ExpectedStatus: 404, NotExpectedContent: secrets},
		{Name: "bad token", Method: "POST", URL: evaluateURL, Headers: map[string]string{"Authorization": "Bearer nonsense"}, ExpectedStatus: 401},
	})
}

// TestFlagRoles: flags and segments are the developer's, reads included
// (SPEC.md); viewers and editors get 403, users 403, anonymous callers
// 401; everyone may use the public evaluate route.
func TestFlagRoles(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	tokens := map[string]string{"owner": s.AdminToken(t)}
	for _, role := range []string{"viewer", "editor", "developer"} {
		_, tokens[role] = newAdmin(t, s, role+"@example.com", role)
	}
	s.CreateCollection(t, usersCollection())
	tokens["user"] = signUp(t, s, "someone@example.com")
	putFlag(t, s, map[string]any{"key": "f"})
	putSegment(t, s, "seg", test("a", "eq", 1))
	type op struct{ method, url string }
	ops := []op{
		{"GET", flagsURL}, {"GET", flagsURL + "/f"}, {"POST", flagsURL}, {"PATCH", flagsURL + "/f"}, {"POST", flagsURL + "/f/evaluate"},
		{"GET", segmentsURL}, {"GET", segmentsURL + "/seg"}, {"POST", segmentsURL}, {"PATCH", segmentsURL + "/seg"},
	}
	body := func(o op, who string) any {
		switch {
		case o.method == "POST" && o.url == flagsURL:
			return map[string]any{"key": "f-" + who}
		case o.method == "POST" && o.url == segmentsURL:
			return map[string]any{"name": "s-" + who, "conditions": test("a", "eq", 1)}
		case o.url == segmentsURL+"/seg":
			return map[string]any{"conditions": test("a", "eq", 2)}
		case o.method == "PATCH":
			return map[string]any{"enabled": true}
		}
		return map[string]any{"context": map[string]any{}}
	}
	for _, who := range []string{"anonymous", "user", "viewer", "editor", "developer", "owner"} {
		headers := map[string]string{}
		if tok := tokens[who]; tok != "" {
			headers["Authorization"] = "Bearer " + tok
		}
		for _, o := range ops {
			want := map[string]int{"anonymous": 401, "user": 403, "viewer": 403, "editor": 403}[who]
			res, out := s.Do(t, o.method, o.url, body(o, who), headers)
			apitest.CheckCommon(t, res, out)
			if want != 0 && res.StatusCode != want || want == 0 && res.StatusCode >= 300 {
				t.Errorf("%s %s %s: %d %s", who, o.method, o.url, res.StatusCode, out)
			}
		}
		if res, out := s.Do(t, "POST", evaluateURL, map[string]any{}, headers); res.StatusCode != 200 {
			t.Errorf("%s: public evaluate %d %s", who, res.StatusCode, out)
		}
	}
	for _, del := range []op{{"DELETE", flagsURL + "/f-owner"}, {"DELETE", segmentsURL + "/s-owner"}} {
		for who, want := range map[string]int{"editor": 403, "developer": 204} {
			if res, out := s.Do(t, del.method, del.url, nil, bearer(tokens[who])); res.StatusCode != want {
				t.Errorf("%s %s %s: %d %s", who, del.method, del.url, res.StatusCode, out)
			}
		}
	}
}
