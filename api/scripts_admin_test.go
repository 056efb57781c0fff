package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// TestScriptsAdmin: the admin CRUD of hooks and custom routes: 201, 200,
// 204, 404; code that does not compile is a 422 naming its line and
// column; a route whose method and path another route serves is a 409;
// developers and owners may, editors and viewers may not; every write
// is audited.
func TestScriptsAdmin(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	hookID := mkHook(t, s, "posts", "beforeCreate", "record.title = record.title.trim()", "order", 2)
	routeID := mkRoute(t, s, "get", "/stats/:coll/", "return {coll: params.coll}")
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "list", URL: hooksURL, Admin: true, ExpectedStatus: 200,
			ExpectedContent: []string{`"event":"beforeCreate"`, `"enabled":true`, `"order":2`, `"id":"` + hookID + `"`}},
		{Name: "code that does not compile names the line and column", Method: "POST", URL: hooksURL, Admin: true,
			Body:           map[string]any{"collection": "posts", "event": "beforeCreate", "code": "const a = 1;\nconst b = ;"},
			ExpectedStatus: 422, ExpectedContent: []string{`"code":"line 2, column 11: Unexpected token ;"`, `"line":2`, `"column":11`}},
		{Name: "code that closes its function early", Method: "POST", URL: hooksURL, Admin: true,
			Body:           map[string]any{"collection": "posts", "event": "beforeCreate", "code": "}); (function(){"},
			ExpectedStatus: 422, AfterFunc: apitest.Details("code")},
		{Name: "unknown event and collection", Method: "POST", URL: hooksURL, Admin: true,
			Body:           map[string]any{"collection": "nope", "event": "onCreate", "code": "return"},
			ExpectedStatus: 422, AfterFunc: apitest.Details("collection", "event")},
		{Name: "blank code", Method: "POST", URL: hooksURL, Admin: true,
			Body: map[string]any{"collection": "*", "event": "afterDelete"}, ExpectedStatus: 422, AfterFunc: apitest.Details("code")},
		{Name: "a member of the wrong type", Method: "POST", URL: hooksURL, Admin: true,
			Body: map[string]any{"collection": "posts", "event": "afterDelete", "code": "return", "order": "first"}, ExpectedStatus: 422,
			AfterFunc: apitest.Details("order")},
		{Name: "get", URL: hooksURL + "/" + hookID, Admin: true, ExpectedStatus: 200},
		{Name: "patch keeps what the body does not name", Method: "PATCH", URL: hooksURL + "/" + hookID, Admin: true,
			Body: map[string]any{"enabled": false}, ExpectedStatus: 200,
			ExpectedContent: []string{`"enabled":false`, `"order":2`, `"code":"record.title = record.title.trim()"`}},
		{Name: "patch with bad code", Method: "PATCH", URL: hooksURL + "/" + hookID, Admin: true,
			Body: map[string]any{"code": "if ("}, ExpectedStatus: 422, AfterFunc: apitest.Details("code", "line", "column")},
		{Name: "unknown hook", URL: hooksURL + "/hook_nope", Admin: true, ExpectedStatus: 404},
		{Name: "get a route", URL: routesURL + "/" + routeID, Admin: true,
			ExpectedStatus: 200, ExpectedContent: []string{`"method":"GET"`, `"path":"stats/:coll"`}},
		{Name: "the same method and path is a conflict", Method: "POST", URL: routesURL, Admin: true,
			Body: map[string]any{"method": "GET", "path": "stats/:name", "code": "return 1"}, ExpectedStatus: 409,
			AfterFunc: apitest.Details("path")},
		{Name: "another method is not", Method: "POST", URL: routesURL, Admin: true,
			Body: map[string]any{"method": "POST", "path": "stats/:name", "code": "return 1"}, ExpectedStatus: 201},
		{Name: "any method is the default", Method: "POST", URL: routesURL, Admin: true,
			Body: map[string]any{"path": "stats/:name", "code": "return 1"}, ExpectedStatus: 201, ExpectedContent: []string{`"method":"*"`}},
		{Name: "bad path and method", Method: "POST", URL: routesURL, Admin: true,
			Body: map[string]any{"method": "TRACE", "path": "a b/:x/:x", "code": "return 1"}, ExpectedStatus: 422,
			AfterFunc: apitest.Details("method", "path")},
		{Name: "a patch into a conflict", Method: "PATCH", URL: routesURL + "/" + routeID, Admin: true,
			Body: map[string]any{"method": "POST"}, ExpectedStatus: 409},
		{Name: "list routes", URL: routesURL, Admin: true, ExpectedStatus: 200, ExpectedContent: []string{`"path":"stats/:coll"`}},
		{Name: "delete a route", Method: "DELETE", URL: routesURL + "/" + routeID, Admin: true, ExpectedStatus: 204},
		{Name: "delete it again", Method: "DELETE", URL: routesURL + "/" + routeID, Admin: true, ExpectedStatus: 404},
		{Name: "delete a hook", Method: "DELETE", URL: hooksURL + "/" + hookID, Admin: true, ExpectedStatus: 204},
	})

	// Every write above is in the audit log, failed ones included.
	audit := s.MustAdmin(t, 200, "GET", "/api/v1/admin/audit-log?perPage=500&actionPrefix=hooks.", nil)
	actions := map[string]int{}
	for _, e := range apitest.List(t, apitest.Obj(t, audit["data"])["data"]) {
		actions[apitest.Obj(t, e)["action"].(string)]++
	}
	if actions["hooks.create"] != 6 || actions["hooks.update"] != 2 || actions["hooks.delete"] != 1 {
		t.Errorf("audited hook actions %v", actions)
	}
	audit = s.MustAdmin(t, 200, "GET", "/api/v1/admin/audit-log?perPage=500&actionPrefix=routes.", nil)
	if n := len(apitest.List(t, apitest.Obj(t, audit["data"])["data"])); n != 8 {
		t.Errorf("%d audited route actions, want 8", n)
	}

	// Roles: developers and owners only, reads included (code may hold
	// secrets).
	for role, want := range map[string][2]int{"viewer": {403, 403}, "editor": {403, 403}, "developer": {200, 201}} {
		_, tok := newAdmin(t, s, role+"@example.com", role)
		res, b := s.Do(t, "GET", hooksURL, nil, bearer(tok))
		if res.StatusCode != want[0] {
			t.Errorf("%s lists hooks: %d %s", role, res.StatusCode, b)
		}
		res, b = s.Do(t, "POST", routesURL, map[string]any{"path": "by-" + role, "code": "return 1"}, bearer(tok))
		if res.StatusCode != want[1] {
			t.Errorf("%s creates a route: %d %s", role, res.StatusCode, b)
		}
	}
	res, _ := s.Do(t, "GET", hooksURL, nil, nil)
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous lists hooks: %d", res.StatusCode)
	}

	// A hook of a collection dropped since can still be disabled and
	// deleted; naming the gone collection again is refused.
	s.CreateCollection(t, coll("gone", "base", []map[string]any{f("x", "text")}))
	orphan := mkHook(t, s, "gone", "afterCreate", "return")
	s.MustAdmin(t, 204, "DELETE", collectionsURL+"/gone", nil)
	s.MustAdmin(t, 200, "PATCH", hooksURL+"/"+orphan, map[string]any{"enabled": false})
	if res, body := s.AdminDo(t, "PATCH", hooksURL+"/"+orphan, map[string]any{"collection": "gone"}); res.StatusCode != 422 {
		t.Errorf("a hook moved to a missing collection: %d %s", res.StatusCode, body)
	}
	s.MustAdmin(t, 204, "DELETE", hooksURL+"/"+orphan, nil)
}
