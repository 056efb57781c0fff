package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestHelpersRecords: find and query read as the route's caller, seeing
// exactly what the record routes show it; records.create, update and
// delete write with the caller's rights; asSystem() with the system's;
// query pages by 100 unless told, and refuses a filter that does not
// apply.
func TestHelpersRecords(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("text", "text"), f("owner", "relation", "collection", "users")},
		"view_rule", "owner = @request.auth.id", "create_rule", "owner = @request.auth.id", "update_rule", "owner = @request.auth.id",
		"delete_rule", "owner = @request.auth.id"))
	s.CreateCollection(t, public(coll("many", "base", []map[string]any{f("n", "number")})))
	ada, bob := signUp(t, s, "ada@example.com"), signUp(t, s, "bob@example.com")
	adaID := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(ada)))["data"])["id"].(string)
	note := s.CreateRecord(t, "notes", map[string]any{"text": "ada's", "owner": adaID})["id"].(string)
	mkRoute(t, s, "GET", "find/:id", `return {found: helpers.find("notes", params.id)}`)
	mkRoute(t, s, "GET", "list", `return helpers.query("notes", {sort: "-created"})`)
	mkRoute(t, s, "POST", "write", `
		const r = helpers.records.create("notes", {text: "new", owner: body.owner});
		const u = helpers.records.update("notes", r.id, {text: "changed"});
		helpers.records.delete("notes", r.id);
		return {created: r.text, updated: u.text}`)
	mkRoute(t, s, "POST", "sys", `return helpers.asSystem().records.create("notes", {text: "by the system", owner: body.owner})`)
	mkRoute(t, s, "GET", "page", `
		const d = helpers.query("many");
		const big = helpers.query("many", {perPage: 200, filter: "n >= 0"});
		let bad; try { helpers.query("many", {filter: "nope ="}) } catch (e) { bad = e.message }
		return {n: d.data.length, total: d.totalItems, perPage: d.perPage, big: big.data.length, bad}`)

	if got := callOK(t, s, "GET", "find/"+note, nil, bearer(ada)); apitest.Obj(t, got["found"])["text"] != "ada's" {
		t.Errorf("the owner finds the note: %v", got)
	}
	for name, h := range map[string]map[string]string{"bob": bearer(bob), "anonymous": nil} {
		if got := callOK(t, s, "GET", "find/"+note, nil, h); got["found"] != nil {
			t.Errorf("%s finds ada's note: %v", name, got)
		}
		if got := callOK(t, s, "GET", "list", nil, h); fmt.Sprint(got["totalItems"]) != "0" {
			t.Errorf("%s lists ada's note: %v", name, got)
		}
	}
	if got := callOK(t, s, "GET", "list", nil, bearer(ada)); fmt.Sprint(got["totalItems"]) != "1" {
		t.Errorf("ada's list: %v", got)
	}
	if got := callOK(t, s, "POST", "write", map[string]any{"owner": adaID}, bearer(ada)); got["created"] != "new" || got["updated"] != "changed" {
		t.Errorf("writes as the owner: %v", got)
	}
	st, v, _ := call(t, s, "POST", "write", map[string]any{"owner": adaID}, bearer(bob))
	if st != 403 {
		t.Errorf("bob writes ada's note through code: %d %v", st, v)
	}
	st, v, _ = call(t, s, "POST", "sys", map[string]any{"owner": adaID}, bearer(bob))
	if st != 200 || apitest.Obj(t, v)["text"] != "by the system" {
		t.Errorf("asSystem: %d %v", st, v)
	}

	var reqs []map[string]any
	for i := range 120 {
		reqs = append(reqs, entry("POST", "/api/v1/many", map[string]any{"n": i}))
		if len(reqs) == 100 || i == 119 {
			s.MustAdmin(t, 200, "POST", batchURL, map[string]any{"requests": reqs})
			reqs = nil
		}
	}
	got := callOK(t, s, "GET", "page", nil, nil)
	if fmt.Sprint(got["n"], got["total"], got["perPage"], got["big"]) != "100 120 100 120" || !strings.Contains(fmt.Sprint(got["bad"]), "filter") {
		t.Errorf("paging: %v", got)
	}
}

// TestHelpersHTTP: helpers.http passes the egress guard (a server on
// loopback is refused until hooks.http.allow names it); helpers.fetch is
// raw; getJson and postJson speak JSON and throw on a status other than
// 2xx; a response over maxBytes throws.
func TestHelpersHTTP(t *testing.T) {
	t.Parallel()
	var got struct {
		method, ctype, auth string
		body                []byte
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.ctype, got.auth = r.Method, r.Header.Get("Content-Type"), r.Header.Get("Authorization")
		got.body, _ = io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"hello":"world","n":[1,2]}`)
		case "/echo":
			w.Header().Set("Content-Type", "application/json")
			w.Write(got.body)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 4096)))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			w.WriteHeader(418)
			fmt.Fprint(w, "teapot")
		}
	}))
	defer srv.Close()
	s := apitest.Start(t, apitest.Options{})
	mkRoute(t, s, "POST", "h/:what", `
		const url = body.url;
		switch (params.what) {
		case "request": { const r = helpers.http.request(url + "/json", {headers: {Authorization: "Bearer x"}}); return {status: r.status, ok: r.ok, ct: r.headers["content-type"], json: r.json()} }
		case "getJson": return helpers.http.getJson(url + "/json");
		case "postJson": return helpers.http.postJson(url + "/echo", {a: [1, {b: true}]});
		case "teapot": try { helpers.http.getJson(url + "/nope") } catch (e) { return {message: e.message, upstream: e.upstreamStatus} }
		case "fetch": { const r = helpers.fetch(url + "/echo", {method: "PUT", body: "raw text"}); return {status: r.status, body: r.body} }
		case "big": return helpers.fetch(url + "/big", {maxBytes: 1024}).body.length;
		case "bigok": return helpers.fetch(url + "/big", {maxBytes: 8192}).body.length;
		case "slow": return helpers.fetch(url + "/slow").status;
		}`)
	do := func(what string) (int, any) {
		st, v, _ := call(t, s, "POST", "h/"+what, map[string]any{"url": srv.URL}, nil)
		return st, v
	}
	st, v := do("request")
	if st != 500 || !strings.Contains(fmt.Sprint(v), "denied range") || !strings.Contains(fmt.Sprint(v), "hooks.http.allow") {
		t.Errorf("a loopback server through http before it is allowed: %d %v", st, v)
	}
	// fetch is raw: no allow needed.
	if st, v = do("fetch"); st != 200 || fmt.Sprint(v) != "map[body:raw text status:200]" || got.method != "PUT" {
		t.Errorf("fetch: %d %v (%s)", st, v, got.method)
	}
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"hooks.http.allow": "127.0.0.1"})
	if st, v = do("request"); st != 200 || fmt.Sprint(v) != "map[ct:application/json json:map[hello:world n:[1 2]] ok:true status:200]" || got.auth != "Bearer x" {
		t.Errorf("http.request: %d %v (auth %q)", st, v, got.auth)
	}
	if st, v = do("getJson"); st != 200 || fmt.Sprint(v) != "map[hello:world n:[1 2]]" || got.method != "GET" {
		t.Errorf("getJson: %d %v", st, v)
	}
	if st, v = do("postJson"); st != 200 || fmt.Sprint(v) != "map[a:[1 map[b:true]]]" || got.method != "POST" || got.ctype != "application/json" {
		t.Errorf("postJson: %d %v (%s %s %s)", st, v, got.method, got.ctype, got.body)
	}
	if st, v = do("teapot"); st != 200 || !strings.Contains(fmt.Sprint(v), "status 418: teapot") || fmt.Sprint(apitest.Obj(t, v)["upstream"]) != "418" {
		t.Errorf("getJson of a 418: %d %v", st, v)
	}
	if st, v = do("big"); st != 500 || !strings.Contains(fmt.Sprint(v), "larger than the limit") {
		t.Errorf("a response over maxBytes: %d %v", st, v)
	}
	if st, v = do("bigok"); st != 200 || fmt.Sprint(v) != "4096" {
		t.Errorf("a response under maxBytes: %d %v", st, v)
	}
	// The execution budget ends a helper waiting on the network too.
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"execution.timeout_ms": "300"})
	start := time.Now()
	if st, v = do("slow"); st != 500 || !strings.Contains(fmt.Sprint(v), "budget") || time.Since(start) > 3*time.Second {
		t.Errorf("a slow server past the budget: %d %v after %s", st, v, time.Since(start))
	}
}

// TestHelpersLibrary: db, security, template, cron, util, path, os,
// uuid, id, slug and log.
func TestHelpersLibrary(t *testing.T) {
	t.Setenv("SVC_JS_GREETING", "hi there")
	t.Setenv("SVC_NOT_FOR_CODE", "secret")
	logs := &logCapture{}
	s := apitest.Start(t, apitest.Options{Logger: logs.logger()})
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	s.CreateRecord(t, "posts", map[string]any{"title": "one"})
	route := mkRoute(t, s, "GET", "lib", `
		const out = {};
		out.rows = helpers.db.query("SELECT title FROM posts WHERE title = ?", "one");
		out.one = helpers.db.one("SELECT count(*) AS n FROM posts");
		out.none = helpers.db.one("SELECT title FROM posts WHERE title = ?", "nope");
		try { helpers.db.query("INSERT INTO posts (id, title) VALUES ('x', 'y')") } catch (e) { out.write = e.message }
		const sec = helpers.security;
		out.sha = sec.hash("sha256", "abc");
		out.hmac = sec.hmac("sha256", "key", "data");
		const tok = sec.jwtSign({sub: "u1"}, "s3cret", {expiresIn: 60});
		out.claims = sec.jwtVerify(tok, "s3cret").sub;
		try { sec.jwtVerify(tok, "wrong") } catch (e) { out.badJwt = e.message }
		const r = sec.randomString(32, "ab");
		out.random = r.length === 32 && /^[ab]+$/.test(r);
		out.equal = [sec.equal("a", "a"), sec.equal("a", "b")];
		const ph = sec.hashPassword("pw-12345678");
		out.pw = [sec.verifyPassword("pw-12345678", ph), sec.verifyPassword("nope", ph)];
		const pb = "$2a$10$IIfYg0lz3W.oAkmJx4LUwuQWWjRTr/LGu2AjqtM0NmoGRYy1bP6wa"; // PocketBase's bcrypt of alice123
		out.pwBcrypt = [sec.verifyPassword("alice123", pb), sec.verifyPassword("alice124", pb)];
		out.text = helpers.template.render("Hi {{.name}}{{range .items}} {{.}}{{end}}", {name: "<b>", items: [1, 2]});
		out.html = helpers.template.render("<p>{{.name}}</p>", {name: "<b>"}, {html: true});
		out.cron = [helpers.cron.valid("*/5 * * * *"), helpers.cron.valid("61 * * * *"), helpers.cron.next("30 2 * * *", 0), helpers.cron.next("0 * * * *", 0, 2)];
		out.util = [helpers.util.base64Encode("hé"), helpers.util.base64Decode("aMOp"), helpers.util.hexEncode("A"), helpers.util.hexDecode("41")];
		const t0 = Date.now(); helpers.util.sleep(30); out.slept = Date.now() - t0 >= 25;
		out.path = [helpers.path.join("a", "b/../c"), helpers.path.ext("x.tar.gz"), helpers.path.base("/a/b"), helpers.path.dir("/a/b")];
		out.env = helpers.os.env("SVC_JS_GREETING");
		try { helpers.os.env("SVC_NOT_FOR_CODE") } catch (e) { out.envRefused = e.message }
		out.node = helpers.os.nodeId().length > 0;
		out.ids = [helpers.uuid().length, helpers.id().length, helpers.slug("  Crème Brûlée, à la carte! ")];
		helpers.log("a line", {n: 1});
		helpers.log.warn("a warning");
		return out`)
	got := callOK(t, s, "GET", "lib", nil, nil)
	mac := hmac.New(sha256.New, []byte("key"))
	mac.Write([]byte("data"))
	want := map[string]string{
		"rows":     "[map[title:one]]",
		"one":      "map[n:1]",
		"none":     "<nil>",
		"sha":      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"hmac":     hex.EncodeToString(mac.Sum(nil)),
		"claims":   "u1",
		"random":   "true",
		"equal":    "[true false]",
		"pw":       "[true false]",
		"pwBcrypt": "[true false]",
		"text":     "Hi <b> 1 2",
		"html":     "<p>&lt;b&gt;</p>",
		"cron":     "[true false 9000 [3600 7200]]",
		"util":     "[aMOp hé 41 A]",
		"slept":    "true",
		"path":     "[a/c .gz b /a]",
		"env":      "hi there",
		"node":     "true",
		"ids":      "[36 15 creme-brulee-a-la-carte]",
	}
	for k, w := range want {
		if g := fmt.Sprint(got[k]); g != w {
			t.Errorf("%s = %s, want %s", k, g, w)
		}
	}
	for k, w := range map[string]string{"write": "readonly", "badJwt": "signature", "envRefused": "SVC_JS_"} {
		if g := fmt.Sprint(got[k]); !strings.Contains(g, w) {
			t.Errorf("%s = %q, want it to mention %q", k, g, w)
		}
	}
	var lines []map[string]any
	for _, r := range logs.records(t, "js") {
		// The code's own lines (a slow run, as under the race detector
		// with two password hashes to check, adds jsvm's own warning).
		if r["id"] == route && r["msg"] == "js" {
			lines = append(lines, r)
		}
	}
	if len(lines) != 2 || lines[0]["text"] != `a line {"n":1}` || lines[1]["level"] != "WARN" {
		t.Errorf("log lines of the route: %v", lines)
	}
}

// TestHelpersFS: fs is not offered to code (a node's disk is not
// replicated): each call throws a clear error.
func TestHelpersFS(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	mkRoute(t, s, "GET", "fs", `try { helpers.fs.readFile("a.txt"); return "no error" } catch (e) { return e.message }`)
	if _, v, _ := call(t, s, "GET", "fs", nil, nil); !strings.Contains(fmt.Sprint(v), "not available to code yet") {
		t.Errorf("fs: %v", v)
	}
}

// TestHelpersFlagsAndWebhooks: flags evaluate the node's flags for the
// context code passes (evaluate, get, isEnabled), and webhooks.dispatch
// queues a custom event that the matching webhook delivers.
func TestHelpersFlagsAndWebhooks(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	s.MustAdmin(t, 201, "POST", flagsURL, map[string]any{"key": "beta", "type": "bool", "enabled": true,
		"rules": []map[string]any{{"id": "staff", "when": map[string]any{"attr": "email", "op": "ends_with", "value": "@corp.test"}, "variation": "on"}}})
	mkRoute(t, s, "POST", "flags", `return {
		all: helpers.flags.evaluate({email: body.email}),
		some: helpers.flags.evaluate({email: body.email}, ["beta", "nope"]),
		beta: helpers.flags.get("beta", {email: body.email}),
		unknown: typeof helpers.flags.get("nope", {}),
		on: helpers.flags.isEnabled("beta", {email: body.email}),
	}`)
	staff := callOK(t, s, "POST", "flags", map[string]any{"email": "kim@corp.test"}, nil)
	guest := callOK(t, s, "POST", "flags", map[string]any{"email": "ada@example.test"}, nil)
	if fmt.Sprint(staff) != "map[all:map[beta:true] beta:true on:true some:map[beta:true] unknown:undefined]" ||
		fmt.Sprint(guest) != "map[all:map[beta:false] beta:false on:false some:map[beta:false] unknown:undefined]" {
		t.Errorf("flags for staff %v, for a guest %v", staff, guest)
	}

	rc := newReceiver(t, nil)
	createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"order.paid"}})
	mkRoute(t, s, "POST", "paid", `helpers.webhooks.dispatch("order.paid", {order: body.order}); return {queued: true}`)
	callOK(t, s, "POST", "paid", map[string]any{"order": 7}, nil)
	got := rc.waitRequests(t, 1)[0]
	p := got.payload(t)
	if got.Header.Get("X-Svc-Event") != "order.paid" || !strings.Contains(fmt.Sprint(p), "order:7") {
		t.Errorf("delivery %v %v", got.Header, p)
	}
}

// TestHelpersNotify: notify is the notifications module's: it writes an
// inbox row the user alone may read (the inbox made on first use) and
// pushes through the enabled providers only.
func TestHelpersNotify(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	ada, bob := signUp(t, s, "ada@example.com"), signUp(t, s, "bob@example.com")
	adaID := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(ada)))["data"])["id"].(string)
	mkRoute(t, s, "POST", "notify", `return helpers.notify(body.user, {title: "Paid", body: "Order 7 is paid", data: {type: "order", id: 7}}, body.opts)`)
	got := callOK(t, s, "POST", "notify", map[string]any{"user": adaID}, nil)
	rowID, _ := got["inboxRowId"].(string)
	if rowID == "" || fmt.Sprint(got["enqueued"]) != "[]" {
		t.Fatalf("notify with no provider enabled: %v", got)
	}
	const inbox = "/api/v1/svc_notifications"
	res, body := s.Do(t, "GET", inbox+"/"+rowID, nil, bearer(ada))
	if res.StatusCode != 200 || !strings.Contains(string(body), `"type":"order"`) || !strings.Contains(string(body), `"title":"Paid"`) {
		t.Errorf("ada reads her notification: %d %s", res.StatusCode, body)
	}
	for name, h := range map[string]map[string]string{"bob": bearer(bob), "anonymous": nil} {
		if res, body := s.Do(t, "GET", inbox+"/"+rowID, nil, h); res.StatusCode != 404 {
			t.Errorf("%s reads ada's notification: %d %s", name, res.StatusCode, body)
		}
	}
	if res, body := s.Do(t, "POST", inbox, map[string]any{"user": adaID, "title": "fake"}, bearer(ada)); res.StatusCode != 403 {
		t.Errorf("a user creates a notification: %d %s", res.StatusCode, body)
	}
	if got := callOK(t, s, "POST", "notify", map[string]any{"user": adaID, "opts": map[string]any{"inbox": false}}, nil); got["inboxRowId"] != nil {
		t.Errorf("inbox false: %v", got)
	}
	// A provider named but not enabled is skipped: nothing is enqueued.
	if got := callOK(t, s, "POST", "notify", map[string]any{"user": adaID, "opts": map[string]any{"providers": []string{"fcm"}}}, nil); got["inboxRowId"] == nil || fmt.Sprint(got["enqueued"]) != "[]" {
		t.Errorf("a provider not enabled: %v", got)
	}
	if st, v, _ := call(t, s, "POST", "notify", map[string]any{"user": "nobody000000000"}, nil); st < 400 || st >= 500 {
		t.Errorf("an unknown user: %d %v", st, v)
	}
	out := s.MustAdmin(t, 200, "GET", inbox+"?filter="+jsonQuote("user = '"+adaID+"'"), nil)
	if n := apitest.Int(t, out["totalItems"]); n != 2 {
		t.Errorf("ada has %d notifications, want 2", n)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b[1:len(b)-1]), " ", "%20")
}

// TestHelpersEmail: helpers.email sends through the node's mail settings
// to a real SMTP catcher.
func TestHelpersEmail(t *testing.T) {
	t.Parallel()
	md := startMaildev(t)
	s := apitest.Start(t, apitest.Options{})
	mkRoute(t, s, "POST", "mail", `return helpers.email({to: [body.to, "copy@example.test"], subject: "Hello " + body.name, text: "Plain", html: "<p>Rich</p>"})`)
	st, v, _ := call(t, s, "POST", "mail", map[string]any{"to": "ada@example.test", "name": "Ada"}, nil)
	if st != 500 || !strings.Contains(fmt.Sprint(v), "not configured") {
		t.Errorf("email before mail is configured: %d %v", st, v)
	}
	md.configure(t, s)
	if got := callOK(t, s, "POST", "mail", map[string]any{"to": "ada@example.test", "name": "Ada"}, nil); fmt.Sprint(got["sent"]) != "2" {
		t.Fatalf("email: %v", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(md.messages(t, "ada@example.test")) == 0 || len(md.messages(t, "copy@example.test")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the messages did not arrive")
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := md.messages(t, "ada@example.test")[0]
	if m.Subject != "Hello Ada" || !strings.Contains(m.Text, "Plain") || !strings.Contains(m.HTML, "<p>Rich</p>") {
		t.Errorf("message %+v", m)
	}
}

// TestHelpersEnqueueAndWorkflowsWired: code reaches the queue and the
// workflows the node runs: helpers.enqueue puts a job on the queue with
// every option (a second one with the same uniqueKey is deduplicated),
// the queue's worker runs it with helpers of its own (it writes a record,
// attributed to the worker in history), and helpers.workflows starts a run
// and wakes it with an event.
func TestHelpersEnqueueAndWorkflowsWired(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("sent", "base", []map[string]any{f("to", "text"), f("attempt", "number")}, "history_enabled", true)))
	mkRoute(t, s, "POST", "q", `return helpers.enqueue("mail", {to: body.to}, {delay: 0.2, uniqueKey: body.to, retries: 2, backoff: "fixed", retryDelayMs: 250})`)
	first := callOK(t, s, "POST", "q", map[string]any{"to": "ada@example.test"}, nil)
	again := callOK(t, s, "POST", "q", map[string]any{"to": "ada@example.test"}, nil)
	id, _ := first["jobId"].(string)
	if id == "" || first["deduped"] != false || again["jobId"] != id || again["deduped"] != true {
		t.Fatalf("enqueue answers %v then %v", first, again)
	}
	job := s.MustAdmin(t, 200, "GET", "/api/v1/admin/queues/mail/jobs/"+id, nil)["data"].(map[string]any)
	if job["uniqueKey"] != "ada@example.test" || fmt.Sprint(job["retries"]) != "2" || job["backoff"] != "fixed" ||
		fmt.Sprint(job["retryDelayMs"]) != "250" || fmt.Sprint(job["payload"]) != "map[to:ada@example.test]" {
		t.Errorf("the queued job %v", job)
	}
	w := s.MustAdmin(t, 201, "POST", "/api/v1/admin/workers", map[string]any{
		"queue": "mail", "concurrency": 1,
		"code": `const r = await helpers.records.create("sent", {to: payload.to, attempt}); return r.id`,
	})["data"].(map[string]any)
	deadline := time.Now().Add(15 * time.Second)
	for {
		job = s.MustAdmin(t, 200, "GET", "/api/v1/admin/queues/mail/jobs/"+id, nil)["data"].(map[string]any)
		if job["state"] == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not succeed: %v", job)
		}
		time.Sleep(50 * time.Millisecond)
	}
	recID, _ := job["result"].(string)
	rec := s.MustAdmin(t, 200, "GET", "/api/v1/sent/"+recID, nil)["data"].(map[string]any)
	if rec["to"] != "ada@example.test" || fmt.Sprint(rec["attempt"]) != "1" {
		t.Errorf("the worker's record %v", rec)
	}
	hist := s.MustAdmin(t, 200, "GET", "/api/v1/sent/"+recID+"/history", nil)
	if !strings.Contains(fmt.Sprint(hist), w["id"].(string)) {
		t.Errorf("history does not name the worker %v: %v", w["id"], hist)
	}

	s.MustAdmin(t, 201, "POST", "/api/v1/admin/workflows", map[string]any{"name": "onboarding",
		"code": `const paid = await step.waitForEvent("paid", {key: input.user}); return {user: input.user, paid}`})
	mkRoute(t, s, "POST", "wf", `return body.emit ? helpers.workflows.emit("paid", {n: 1}, {key: body.user}) : helpers.workflows.start("onboarding", {user: body.user})`)
	run := callOK(t, s, "POST", "wf", map[string]any{"user": "u1"}, nil)
	runID, _ := run["runId"].(string)
	if runID == "" {
		t.Fatalf("start answered %v", run)
	}
	var state map[string]any
	for deadline = time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		state = s.MustAdmin(t, 200, "GET", "/api/v1/admin/workflows/runs/"+runID, nil)["data"].(map[string]any)
		if state["state"] == "waiting" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run does not wait: %v", state)
		}
	}
	if got := callOK(t, s, "POST", "wf", map[string]any{"user": "u1", "emit": true}, nil); fmt.Sprint(got["woken"]) != "1" {
		t.Fatalf("emit answered %v", got)
	}
	for deadline = time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		state = s.MustAdmin(t, 200, "GET", "/api/v1/admin/workflows/runs/"+runID, nil)["data"].(map[string]any)
		if state["state"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not complete: %v", state)
		}
	}
	if fmt.Sprint(state["output"]) != "map[paid:map[n:1] user:u1]" {
		t.Errorf("the run's output %v", state["output"])
	}
}
