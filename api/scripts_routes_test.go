package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestCustomRoutes: what a route's code receives (params, query, body of
// each type, auth, ctx.method, ctx.path, ctx.headers without
// credentials) and how its answer is sent (the value as it is,
// set.status and set.headers with reserved headers stripped, 204 for
// nothing); which route answers (a method's own before any method's, a
// literal segment before a parameter; none: 404); errors (abort, a
// helper's status, a throw, a bad set.status).
func TestCustomRoutes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("vault", "base", []map[string]any{f("name", "text")}))
	mkRoute(t, s, "*", "echo/:a/x/:b", `return {params, query, body, auth, method: ctx.method, path: ctx.path, headers: ctx.headers}`)
	mkRoute(t, s, "GET", "answer/:kind", `
		set.headers["X-Thing"] = "v";
		set.headers["Content-Type"] = "text/html";
		set.headers["X-Svc-Node"] = "forged";
		set.headers["Access-Control-Allow-Origin"] = "*";
		set.headers["Set-Cookie"] = params.kind === "cookie" ? "svc_user_token=stolen" : "theme=dark";
		switch (params.kind) {
		case "array": return [1, "two", {three: 3}];
		case "string": return "text";
		case "null": return null;
		case "created": set.status = 201; return {ok: true};
		case "accepted": set.status = 202; return;
		case "badstatus": set.status = 99; return 1;
		case "nothing": return;
		}
		return {kind: params.kind}`)
	mkRoute(t, s, "GET", "pick/:x", `return "param get"`)
	mkRoute(t, s, "*", "pick/:x", `return "param any"`)
	mkRoute(t, s, "GET", "pick/fixed", `return "literal get"`)
	mkRoute(t, s, "*", "pick/:x/deeper", `return "deeper"`)
	mkRoute(t, s, "*", "fail/:how", `
		if (params.how === "abort") helpers.abort("not like this");
		if (params.how === "abort404") helpers.abort("no such thing", 404);
		if (params.how === "helper") return helpers.find("vault", "nope");
		if (params.how === "caught") { try { helpers.find("vault", "nope") } catch (e) { return {status: e.status, message: e.message} } }
		throw new Error("the route broke")`)
	off := mkRoute(t, s, "GET", "off", `return 1`)
	s.MustAdmin(t, 200, "PATCH", routesURL+"/"+off, map[string]any{"enabled": false})

	// What the code receives.
	got := callOK(t, s, "POST", "echo/1/x/two?q=v&q=w&z=", map[string]any{"n": 1.5, "s": "t"},
		map[string]string{"X-Custom": "h", "Authorization": "Bearer " + s.AdminToken(t)})
	if fmt.Sprint(got["params"]) != "map[a:1 b:two]" || fmt.Sprint(got["query"]) != "map[q:v z:]" ||
		fmt.Sprint(got["body"]) != "map[n:1.5 s:t]" || got["method"] != "POST" || got["path"] != "echo/1/x/two" {
		t.Errorf("echo: %v", got)
	}
	hs := apitest.Obj(t, got["headers"])
	if hs["x-custom"] != "h" || hs["authorization"] != nil {
		t.Errorf("headers: %v", hs)
	}
	if a := apitest.Obj(t, got["auth"]); a["type"] != "admin" || a["role"] != "owner" {
		t.Errorf("auth of the admin: %v", a)
	}
	got = callOK(t, s, "PUT", "echo/a/x/b", "k=1&k=2&m=x", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if fmt.Sprint(got["body"]) != "map[k:[1 2] m:x]" || got["auth"] != nil {
		t.Errorf("form body, anonymous: %v", got)
	}
	form, ct := multipartBody(t, value("k", "v"), file("f", "a.txt", []byte("ignored")))
	got = callOK(t, s, "POST", "echo/a/x/b", form, map[string]string{"Content-Type": ct})
	if fmt.Sprint(got["body"]) != "map[k:v]" {
		t.Errorf("multipart body: %v", got)
	}
	got = callOK(t, s, "PATCH", "echo/a/x/b", "plain words", map[string]string{"Content-Type": "text/plain"})
	if got["body"] != "plain words" {
		t.Errorf("text body: %v", got)
	}
	if got = callOK(t, s, "DELETE", "echo/a/x/b", nil, nil); got["body"] != nil {
		t.Errorf("no body: %v", got["body"])
	}
	tok := signUp(t, s, "ada@example.com")
	got = callOK(t, s, "GET", "echo/a/x/b", nil, bearer(tok))
	if a := apitest.Obj(t, got["auth"]); a["type"] != "user" || a["email"] != "ada@example.com" || a["collection"] != "users" {
		t.Errorf("auth of a user: %v", a)
	}
	if st, v, _ := call(t, s, "POST", "echo/a/x/b", "{bad", map[string]string{"Content-Type": "application/json"}); st != 400 {
		t.Errorf("a body that is not JSON: %d %v", st, v)
	}

	// How the answer is sent.
	for kind, want := range map[string]struct {
		status int
		body   string
	}{
		"obj": {200, `{"kind":"obj"}`}, "array": {200, `[1,"two",{"three":3}]`}, "string": {200, `"text"`},
		"null": {200, `null`}, "created": {201, `{"ok":true}`}, "accepted": {202, ``}, "nothing": {204, ``},
	} {
		res, body := s.Do(t, "GET", "/api/v1/custom/answer/"+kind, nil, nil)
		if res.StatusCode != want.status || strings.TrimSpace(string(body)) != want.body {
			t.Errorf("%s: %d %q, want %d %q", kind, res.StatusCode, body, want.status, want.body)
		}
		if res.Header.Get("X-Thing") != "v" || res.Header.Get("Set-Cookie") != "theme=dark" {
			t.Errorf("%s: the route's headers are missing: %v", kind, res.Header)
		}
		if want.body != "" && res.Header.Get("Content-Type") != "application/json" ||
			res.Header.Get("X-Svc-Node") == "forged" || res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: a reserved header went through: %v", kind, res.Header)
		}
	}
	res, _ := s.Do(t, "GET", "/api/v1/custom/answer/cookie", nil, nil)
	if res.Header.Get("Set-Cookie") != "" {
		t.Errorf("a route set the session cookie: %v", res.Header.Values("Set-Cookie"))
	}
	res, body := s.Do(t, "HEAD", "/api/v1/custom/answer/obj", nil, nil)
	if res.StatusCode != 200 || len(body) != 0 {
		t.Errorf("HEAD: %d %q", res.StatusCode, body)
	}

	// Which route answers.
	for _, c := range []struct{ method, path, want string }{
		{"GET", "pick/fixed", "literal get"}, {"GET", "pick/other", "param get"}, {"POST", "pick/fixed", "param any"},
		{"DELETE", "pick/x/deeper", "deeper"},
	} {
		_, v, _ := call(t, s, c.method, c.path, nil, nil)
		if v != c.want {
			t.Errorf("%s %s answered %v, want %q", c.method, c.path, v, c.want)
		}
	}

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "no route", URL: "/api/v1/custom/nothing/here", ExpectedStatus: 404},
		{Name: "a disabled route", URL: "/api/v1/custom/off", ExpectedStatus: 404},
		{Name: "the root of custom", URL: "/api/v1/custom/", ExpectedStatus: 404},
		{Name: "abort", URL: "/api/v1/custom/fail/abort", ExpectedStatus: 422, ExpectedContent: []string{`"error":"not like this"`, `"route":"route_`}},
		{Name: "abort with a status", URL: "/api/v1/custom/fail/abort404", ExpectedStatus: 404, ExpectedContent: []string{`"error":"no such thing"`}},
		{Name: "a helper's error, uncaught", URL: "/api/v1/custom/fail/helper", ExpectedStatus: 403,
			ExpectedContent: []string{`"error":"helpers.find: Only admins can perform this action"`}},
		{Name: "a helper's error, caught", URL: "/api/v1/custom/fail/caught", ExpectedStatus: 200,
			ExpectedContent: []string{`"status":403`}},
		{Name: "a throw", URL: "/api/v1/custom/fail/throw", ExpectedStatus: 500, ExpectedContent: []string{`"error":"the route broke"`}},
		{Name: "a bad set.status", URL: "/api/v1/custom/answer/badstatus", ExpectedStatus: 500, ExpectedContent: []string{"set.status"}},
		{Name: "a bad Authorization header", URL: "/api/v1/custom/pick/x", Headers: map[string]string{"Authorization": "Bearer nope"},
			ExpectedStatus: 401},
	})
}

// TestCustomRoutesAreRateLimited: custom routes are /api/* paths under the
// root rate limiter like every other.
func TestCustomRoutesAreRateLimited(t *testing.T) {
	t.Parallel()
	n := startLimited(t, "")
	mkRoute(t, n.base, "GET", "limited", `return 1`)
	n.setRules(t, []rule{{Label: "/api/v1/custom/limited", Max: 2, WindowMs: 60000}})
	c := n.from(t, "127.0.0.31")
	r := req{method: http.MethodGet, path: "/api/v1/custom/limited"}
	burst(t, c, 2, r)
	mustLimit(t, c, r, "/api/v1/custom/limited", "30")
}
