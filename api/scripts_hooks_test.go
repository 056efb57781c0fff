package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// hookSchema: posts (what hooks act on) and logs (where after-hooks
// write), both public.
func hookSchema(t testing.TB, s *apitest.Server) {
	t.Helper()
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text", "required", true), f("slug", "text"), f("n", "number")})))
	s.CreateCollection(t, public(coll("logs", "base", []map[string]any{f("msg", "text"), f("ref", "text")}, "history_enabled", true)))
}

// logMsgs are the msg of every logs record, oldest first.
func logMsgs(t testing.TB, s *apitest.Server) []string {
	t.Helper()
	var out []string
	for _, r := range listAll(t, s, "logs") {
		out = append(out, r["msg"].(string))
	}
	return out
}

// TestHookEvents: each of the six events with each outcome: a
// before-hook that changes the record changes what is stored, one that
// aborts or throws refuses the write with a 422 naming the hook and
// leaves nothing changed; after-hooks run once, after the write, and
// their failure does not fail it.
func TestHookEvents(t *testing.T) {
	t.Parallel()
	logs := &logCapture{}
	s := apitest.Start(t, apitest.Options{Logger: logs.logger()})
	hookSchema(t, s)
	createHook := mkHook(t, s, "posts", "beforeCreate", `
		if (record.title === "forbidden") helpers.abort("this title is forbidden");
		if (record.title === "throw") throw new Error("the hook threw");
		record.slug = helpers.slug(record.title);
		record.n = (record.n || 0) + 1;`)
	mkHook(t, s, "posts", "afterCreate", `helpers.records.create("logs", {msg: "created " + record.slug, ref: record.id})`)
	failing := mkHook(t, s, "posts", "afterCreate", `throw new Error("after-hook failure " + record.id)`, "order", 5)
	updateHook := mkHook(t, s, "posts", "beforeUpdate", `
		if (record.title === "forbidden") helpers.abort("no", 409);
		if (record.title !== existing.title) record.slug = helpers.slug(record.title);`)
	mkHook(t, s, "posts", "afterUpdate", `helpers.records.create("logs", {msg: "updated " + existing.slug + " to " + record.slug, ref: record.id})`)
	deleteHook := mkHook(t, s, "posts", "beforeDelete", `if (record.title === "keep me") helpers.abort("kept: " + existing.id)`)
	mkHook(t, s, "posts", "afterDelete", `helpers.records.create("logs", {msg: "deleted " + record.title, ref: record.id})`)

	// beforeCreate changes what is stored; afterCreate runs once.
	created := s.CreateRecord(t, "posts", map[string]any{"title": "Hello Wörld", "n": 41})
	if created["slug"] != "hello-world" || fmt.Sprint(created["n"]) != "42" {
		t.Fatalf("created %v", created)
	}
	id := created["id"].(string)
	eventually(t, "the afterCreate log", func() bool { return len(logMsgs(t, s)) == 1 })
	if got := logMsgs(t, s); got[0] != "created hello-world" {
		t.Errorf("logs %v", got)
	}
	// The failing after-hook was logged with its id; the write stood.
	eventually(t, "the failing after-hook's log line", func() bool {
		return strings.Contains(logs.text(), "after-hook failed") && strings.Contains(logs.text(), failing)
	})

	// Refusals: 422 with the message and the hook in details; nothing
	// written.
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "beforeCreate aborts", Method: "POST", URL: "/api/v1/posts", Body: map[string]any{"title": "forbidden"},
			ExpectedStatus: 422, ExpectedContent: []string{`"error":"this title is forbidden"`, `"hook":"` + createHook + `"`}},
		{Name: "beforeCreate throws", Method: "POST", URL: "/api/v1/posts", Body: map[string]any{"title": "throw"},
			ExpectedStatus: 422, ExpectedContent: []string{`"error":"the hook threw"`, `"hook":"` + createHook + `"`}},
		{Name: "the changed record is validated", Method: "POST", URL: "/api/v1/posts", Body: map[string]any{"title": "x", "n": "not a number"},
			ExpectedStatus: 422, AfterFunc: apitest.Details("n")},
		{Name: "beforeUpdate aborts with a status", Method: "PATCH", URL: "/api/v1/posts/" + id, Body: map[string]any{"title": "forbidden"},
			ExpectedStatus: 409, ExpectedContent: []string{`"error":"no"`, `"hook":"` + updateHook + `"`}},
		{Name: "beforeUpdate changes the slug", Method: "PATCH", URL: "/api/v1/posts/" + id, Body: map[string]any{"title": "Second Title"},
			ExpectedStatus: 200, ExpectedContent: []string{`"slug":"second-title"`, `"title":"Second Title"`, `"n":42`}},
	})
	if n := len(listAll(t, s, "posts")); n != 1 {
		t.Errorf("%d posts after the refusals, want 1", n)
	}
	eventually(t, "the afterUpdate log", func() bool { return len(logMsgs(t, s)) == 2 })

	// beforeDelete refuses; afterDelete sees the deleted record.
	keep := s.CreateRecord(t, "posts", map[string]any{"title": "keep me"})["id"].(string)
	res, body := s.AdminDo(t, "DELETE", "/api/v1/posts/"+keep, nil)
	if res.StatusCode != 422 || !strings.Contains(string(body), "kept: "+keep) || !strings.Contains(string(body), deleteHook) {
		t.Errorf("delete of a kept record: %d %s", res.StatusCode, body)
	}
	s.MustAdmin(t, 204, "DELETE", "/api/v1/posts/"+id, nil)
	eventually(t, "the afterDelete log", func() bool { return len(logMsgs(t, s)) == 4 })
	// Each after-hook ran once per write.
	for _, m := range []string{"created hello-world", "updated hello-world to second-title", "created keep-me", "deleted Second Title"} {
		n := 0
		for _, got := range logMsgs(t, s) {
			if got == m {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q logged %d times", m, n)
		}
	}
}

// TestHookOrderScopeAndState: hooks of one event run in order (then by
// id), "*" hooks run for every collection after a collection's own,
// disabled hooks do not run, and ctx.auth is the caller.
func TestHookOrderScopeAndState(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	hookSchema(t, s)
	s.CreateCollection(t, usersCollection())
	mkHook(t, s, "posts", "beforeCreate", `record.slug = (record.slug || "") + "b"`, "order", 2)
	mkHook(t, s, "posts", "beforeCreate", `record.slug = (record.slug || "") + "a"`, "order", 1)
	mkHook(t, s, "*", "beforeCreate", `if (collection !== "users") record.slug = (record.slug || "") + "*"`)
	off := mkHook(t, s, "posts", "beforeCreate", `record.slug = "disabled hooks run"`, "order", 3, "enabled", false)
	mkHook(t, s, "logs", "beforeCreate", `record.msg = JSON.stringify(auth)`)
	if got := s.CreateRecord(t, "posts", map[string]any{"title": "x"})["slug"]; got != "ab*" {
		t.Errorf("slug %q, want ab*", got)
	}
	if got := s.CreateRecord(t, "logs", map[string]any{})["msg"]; !strings.Contains(got.(string), `"type":"admin"`) || !strings.Contains(got.(string), `"role":"owner"`) {
		t.Errorf("auth of an admin: %v", got)
	}
	res, body := s.Do(t, "POST", "/api/v1/logs", map[string]any{}, nil)
	if res.StatusCode != 201 || !strings.Contains(string(body), `"msg":"null"`) {
		t.Errorf("auth of an anonymous caller: %d %s", res.StatusCode, body)
	}
	tok := signUp(t, s, "ada@example.com")
	res, body = s.Do(t, "POST", "/api/v1/logs", map[string]any{}, bearer(tok))
	if res.StatusCode != 201 || !strings.Contains(string(body), `\"type\":\"user\"`) || !strings.Contains(string(body), `ada@example.com`) {
		t.Errorf("auth of a user: %d %s", res.StatusCode, body)
	}
	// Enabling the disabled hook makes it run.
	s.MustAdmin(t, 200, "PATCH", hooksURL+"/"+off, map[string]any{"enabled": true})
	if got := s.CreateRecord(t, "posts", map[string]any{"title": "y"})["slug"]; got != "disabled hooks run*" {
		t.Errorf("slug %q after enabling", got)
	}
}

// TestHookSecretsAndLimits: hooks never see passwords (which are stored
// as sent); a hook past the execution budget refuses its write; slow
// hooks are logged; hooks whose writes fire hooks stop at the depth
// cap.
func TestHookSecretsAndLimits(t *testing.T) {
	t.Parallel()
	logs := &logCapture{}
	s := apitest.Start(t, apitest.Options{Logger: logs.logger()})
	hookSchema(t, s)
	s.CreateCollection(t, usersCollection())
	mkHook(t, s, "users", "beforeCreate", `record.name = typeof record.password + "/" + typeof record.passwordConfirm`)
	res, body := s.Do(t, "POST", "/api/v1/auth/users/register",
		map[string]any{"email": "pw@example.com", "password": userPassword, "passwordConfirm": userPassword}, nil)
	if res.StatusCode != 201 {
		t.Fatalf("register: %d %s", res.StatusCode, body)
	}
	login(t, s, "pw@example.com", userPassword) // stored as sent
	users := listAll(t, s, "users")
	if users[0]["name"] != "undefined/undefined" {
		t.Errorf("a hook saw the password: %v", users[0]["name"])
	}

	// The depth cap: each logs create creates another.
	chain := mkHook(t, s, "logs", "beforeCreate", `helpers.records.create("logs", {msg: "nested"})`)
	res, body = s.AdminDo(t, "POST", "/api/v1/logs", map[string]any{"msg": "top"})
	if res.StatusCode != 422 || !strings.Contains(string(body), "Hooks nest too deep") || !strings.Contains(string(body), chain) {
		t.Errorf("a hook chain: %d %s", res.StatusCode, body)
	}
	if n := len(listAll(t, s, "logs")); n != 0 {
		t.Errorf("%d logs written by a refused chain", n)
	}
	s.MustAdmin(t, 204, "DELETE", hooksURL+"/"+chain, nil)

	// The budget interrupts a busy hook; slow hooks are logged.
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"execution.timeout_ms": "200", "hooks.slow_ms": "50"})
	busy := mkHook(t, s, "posts", "beforeCreate", `if (record.title === "spin") for (;;) {}`)
	res, body = s.AdminDo(t, "POST", "/api/v1/posts", map[string]any{"title": "spin"})
	if res.StatusCode != 422 || !strings.Contains(string(body), "budget") || !strings.Contains(string(body), busy) {
		t.Errorf("a busy hook: %d %s", res.StatusCode, body)
	}
	found := false
	for _, r := range logs.records(t, "jsvm: slow code") {
		found = found || r["id"] == busy
	}
	if !found {
		t.Error("the slow hook was not logged")
	}
}

// TestHookEntryPoints: hooks run for record writes from every entry
// point: batch entries, multipart creates and updates, CSV import rows,
// account registration and writes made by code.
func TestHookEntryPoints(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	hookSchema(t, s)
	s.CreateCollection(t, public(coll("papers", "base", []map[string]any{f("title", "text"), f("file", "file")})))
	mkHook(t, s, "*", "beforeCreate", `
		if (record.title === "refuse") helpers.abort("refused " + collection);
		if (collection !== "logs") record.title = (record.title || "") + "+hooked"`)
	mkHook(t, s, "*", "beforeUpdate", `if (collection !== "logs") record.title = record.title + "+updated"`)
	mkHook(t, s, "*", "afterCreate", `if (collection !== "logs") helpers.records.create("logs", {msg: "after " + collection, ref: record.id})`)
	mkHook(t, s, "posts", "beforeDelete", `if (record.title.startsWith("undeletable")) helpers.abort("not deletable")`)

	// Batch: every write entry; a refusal fails the batch at its index.
	p1 := s.CreateRecord(t, "posts", map[string]any{"title": "p1"})["id"].(string)
	out := s.MustAdmin(t, 200, "POST", batchURL, map[string]any{"requests": []map[string]any{
		entry("POST", "/api/v1/posts", map[string]any{"title": "b1"}),
		entry("PATCH", "/api/v1/posts/"+p1, map[string]any{"title": "p1b"}),
	}})
	items := apitest.List(t, out["data"])
	if b := apitest.Obj(t, apitest.Obj(t, items[0])["body"]); b["title"] != "b1+hooked" {
		t.Errorf("batch create: %v", b)
	}
	if b := apitest.Obj(t, apitest.Obj(t, items[1])["body"]); b["title"] != "p1b+updated" {
		t.Errorf("batch update: %v", b)
	}
	res, body := s.AdminDo(t, "POST", batchURL, map[string]any{"requests": []map[string]any{
		entry("POST", "/api/v1/posts", map[string]any{"title": "fine"}),
		entry("POST", "/api/v1/posts", map[string]any{"title": "refuse"}),
	}})
	if res.StatusCode != 422 || !strings.Contains(string(body), "batch failed at request 1: refused posts") {
		t.Errorf("batch with a refused entry: %d %s", res.StatusCode, body)
	}
	undel := s.CreateRecord(t, "posts", map[string]any{"title": "undeletable"})["id"].(string)
	res, body = s.AdminDo(t, "POST", batchURL, map[string]any{"requests": []map[string]any{entry("DELETE", "/api/v1/posts/"+undel, nil)}})
	if res.StatusCode != 422 || !strings.Contains(string(body), "not deletable") {
		t.Errorf("batch delete refused by a hook: %d %s", res.StatusCode, body)
	}

	// Multipart create and update: the form's fields pass the hooks; the
	// files go with the record.
	res, body = sendForm(t, s, "POST", "/api/v1/papers", s.AdminHeaders(t, nil), value("title", "form"), file("file", "a.txt", []byte("hello")))
	if res.StatusCode != 201 || !strings.Contains(string(body), `"title":"form+hooked"`) {
		t.Fatalf("multipart create: %d %s", res.StatusCode, body)
	}
	doc := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
	if doc["file"] == "" || doc["file"] == nil {
		t.Errorf("multipart create stored no file: %v", doc)
	}
	res, body = sendForm(t, s, "PATCH", "/api/v1/papers/"+doc["id"].(string), s.AdminHeaders(t, nil), value("title", "form2"))
	if res.StatusCode != 200 || !strings.Contains(string(body), `"title":"form2+updated"`) {
		t.Errorf("multipart update: %d %s", res.StatusCode, body)
	}
	res, body = sendForm(t, s, "POST", "/api/v1/papers", s.AdminHeaders(t, nil), value("title", "refuse"), file("file", "b.txt", []byte("x")))
	if res.StatusCode != 422 || !strings.Contains(string(body), "refused papers") {
		t.Errorf("multipart create refused by a hook: %d %s", res.StatusCode, body)
	}

	// CSV import: each row; a refused row fails with the hook's message.
	res, body = s.Do(t, "POST", "/api/v1/admin/import/posts", "title\ncsv1\nrefuse\ncsv2\n", s.AdminHeaders(t, map[string]string{"Content-Type": "text/csv"}))
	if res.StatusCode != 200 {
		t.Fatalf("import: %d %s", res.StatusCode, body)
	}
	imp := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
	if fmt.Sprint(imp["created"]) != "2" || fmt.Sprint(imp["failed"]) != "1" ||
		!strings.Contains(string(body), `"_row":"refused posts"`) || !strings.Contains(string(body), `"row":3`) {
		t.Errorf("import answer %s", body)
	}

	// A route's write runs the hooks too.
	mkRoute(t, s, "POST", "mk", `return helpers.records.create("posts", {title: body.title})`)
	got := callOK(t, s, "POST", "mk", map[string]any{"title": "via code"}, s.AdminHeaders(t, nil))
	if got["title"] != "via code+hooked" {
		t.Errorf("a route's create: %v", got)
	}

	titles := map[string]bool{}
	for _, p := range listAll(t, s, "posts") {
		titles[p["title"].(string)] = true
	}
	for _, want := range []string{"b1+hooked", "p1b+updated", "csv1+hooked", "csv2+hooked", "via code+hooked"} {
		if !titles[want] {
			t.Errorf("no post titled %q (have %v)", want, titles)
		}
	}
	if titles["fine+hooked"] || titles["refuse"] {
		t.Errorf("a refused write left records: %v", titles)
	}
	// After-hooks ran once per created record: p1, b1, undeletable, the
	// doc, csv1, csv2, the route's.
	eventually(t, "the after-hooks of every entry point", func() bool { return len(logMsgs(t, s)) == 7 })
}

// TestHookWritesAreAttributed: a write made by a hook is the caller's,
// named in history as made via the hook; one made through
// helpers.asSystem() is the system's, and audited with the hook as
// actor.
func TestHookWritesAreAttributed(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	hookSchema(t, s)
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("secrets", "base", []map[string]any{f("msg", "text")}, "history_enabled", true))
	asCaller := mkHook(t, s, "posts", "beforeCreate", `helpers.records.create("logs", {msg: "by caller"})`)
	asSystem := mkHook(t, s, "posts", "afterCreate", `helpers.asSystem().records.create("secrets", {msg: "by system"})`)
	tok := signUp(t, s, "ada@example.com")
	userID := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(tok)))["data"])["id"].(string)
	res, body := s.Do(t, "POST", "/api/v1/posts", map[string]any{"title": "t"}, bearer(tok))
	if res.StatusCode != 201 {
		t.Fatalf("create: %d %s", res.StatusCode, body)
	}
	eventually(t, "the system's write", func() bool { return len(listAll(t, s, "secrets")) == 1 })

	logID := listAll(t, s, "logs")[0]["id"].(string)
	h := s.MustAdmin(t, 200, "GET", "/api/v1/logs/"+logID+"/history", nil)
	e := apitest.Obj(t, apitest.List(t, apitest.Obj(t, h["data"])["data"])[0])
	if e["actor_type"] != "user" || e["actor_id"] != userID || e["via"] != asCaller {
		t.Errorf("history of the caller's write: %v", e)
	}
	secretID := listAll(t, s, "secrets")[0]["id"].(string)
	h = s.MustAdmin(t, 200, "GET", "/api/v1/secrets/"+secretID+"/history", nil)
	e = apitest.Obj(t, apitest.List(t, apitest.Obj(t, h["data"])["data"])[0])
	if e["actor_type"] != "system" || e["via"] != asSystem {
		t.Errorf("history of the system's write: %v", e)
	}
	// The audit entry is its own write, made after the record's: the
	// after-hook may still be on its way to it.
	var entries []any
	eventually(t, "the audit entry of the system's write", func() bool {
		audit := s.MustAdmin(t, 200, "GET", "/api/v1/admin/audit-log?actorId="+asSystem, nil)
		entries = apitest.List(t, apitest.Obj(t, audit["data"])["data"])
		return len(entries) >= 1
	})
	if len(entries) != 1 {
		t.Fatalf("audit entries of the hook: %v", entries)
	}
	a := apitest.Obj(t, entries[0])
	if a["action"] != "records.create" || a["target"] != "secrets/"+secretID || fmt.Sprint(a["status"]) != "201" {
		t.Errorf("audit entry %v", a)
	}
	// The caller's own write through the hook is not audited.
	audit := s.MustAdmin(t, 200, "GET", "/api/v1/admin/audit-log?actorId="+asCaller, nil)
	if n := len(apitest.List(t, apitest.Obj(t, audit["data"])["data"])); n != 0 {
		t.Errorf("%d audit entries for writes with the caller's rights", n)
	}
	_ = http.StatusOK
}
