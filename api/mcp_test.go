package api_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// mcpFixture: a node with an owner-ruled and an admin-only collection, a
// record in each, and the token of the main (owner) admin per scope set.
func mcpFixture(t *testing.T) *apitest.Server {
	t.Helper()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, map[string]any{"name": "people", "type": "auth"})
	s.CreateCollection(t, map[string]any{"name": "tasks", "fields": []map[string]any{
		{"name": "title", "type": "text", "required": true},
		{"name": "secret", "type": "text", "hidden": true},
		{"name": "owner", "type": "relation", "collection": "people"},
	}, "view_rule": "owner = @request.auth.id", "create_rule": "@request.auth.id != \"\""})
	s.CreateCollection(t, map[string]any{"name": "vault", "fields": []map[string]any{{"name": "code", "type": "text"}}})
	ann := s.CreateRecord(t, "people", map[string]any{"email": "ann@example.com", "password": "a-long-password-1"})
	s.CreateRecord(t, "tasks", map[string]any{"title": "t1", "secret": "s1", "owner": ann["id"]})
	s.CreateRecord(t, "vault", map[string]any{"code": "v1"})
	return s
}

var (
	readTools  = []string{"svc.describe_collection", "svc.get_people", "svc.get_tasks", "svc.get_vault", "svc.list_collections", "svc.list_people", "svc.list_tasks", "svc.list_vault", "svc.read_audit_log", "svc.read_logs"}
	writeTools = []string{"svc.create_people", "svc.create_tasks", "svc.create_vault", "svc.delete_people", "svc.delete_tasks", "svc.delete_vault", "svc.seed", "svc.update_people", "svc.update_tasks", "svc.update_vault"}
	adminOnly  = []string{"svc.alter_collection", "svc.create_collection", "svc.create_hook", "svc.create_job", "svc.create_route", "svc.dispatch_webhook_event", "svc.list_settings", "svc.run_job_now", "svc.update_flag", "svc.update_setting"}
	sqlTools   = []string{"svc.run_sql"}
)

func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return out
}

// Each mcp:* scope sees exactly its tools (SPEC.md's table); mcp:admin
// implies the others; mcp:write does not imply mcp:read; a call of a tool
// the scope does not show is -32001; --read-only (the bridge's header)
// narrows whatever the token holds.
func TestMCPScopes(t *testing.T) {
	t.Parallel()
	s := mcpFixture(t)
	admin := s.AdminToken(t)
	cases := []struct {
		scopes   []string
		readOnly bool
		want     []string
	}{
		{[]string{"mcp:read"}, false, union(readTools)},
		{[]string{"mcp:write"}, false, union(writeTools)},
		{[]string{"mcp:sql"}, false, union(sqlTools)},
		{[]string{"mcp:admin"}, false, union(readTools, writeTools, adminOnly, sqlTools)},
		{[]string{"mcp:read", "mcp:write"}, false, union(readTools, writeTools)},
		{[]string{"mcp:admin"}, true, union(readTools, sqlTools)},
		{[]string{"mcp:write", "mcp:read"}, true, union(readTools)},
	}
	for _, c := range cases {
		h := bearer(mcpTokenOf(t, s, admin, c.scopes...))
		if c.readOnly {
			h["X-Svc-Mcp-Read-Only"] = "1"
		}
		got := toolNames(t, s, h)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v read-only=%v sees %v\nwant %v", c.scopes, c.readOnly, got, c.want)
		}
		all := union(readTools, writeTools, adminOnly, sqlTools)
		for _, name := range all {
			if slices.Contains(c.want, name) {
				continue
			}
			if _, code := callTool(t, s, h, name, nil); code != -32001 {
				t.Errorf("%v read-only=%v: calling %s: code %d, want -32001", c.scopes, c.readOnly, name, code)
			}
		}
	}
	// An unknown tool is -32602, not a scope error.
	h := bearer(mcpTokenOf(t, s, admin, "mcp:admin"))
	if _, code := callTool(t, s, h, "svc.list_nothing", nil); code != -32602 {
		t.Errorf("unknown tool: code %d, want -32602", code)
	}
	// The registry follows the schema from one request to the next.
	s.CreateCollection(t, map[string]any{"name": "later", "fields": []map[string]any{{"name": "x", "type": "text"}}})
	if got := toolNames(t, s, h); !slices.Contains(got, "svc.list_later") {
		t.Errorf("a new collection's tools are missing: %v", got)
	}
}

// A record tool reads and writes as the token's admin, through the rules:
// an admin demoted to viewer has a token that reads only what the rules
// give a guest, and cannot write; the owner's token acts as an admin.
func TestMCPRecordToolsFollowTheAdmin(t *testing.T) {
	t.Parallel()
	s := mcpFixture(t)
	id, session := newAdmin(t, s, "second@example.com", "owner")
	tok := bearer(mcpTokenOf(t, s, session, "mcp:read", "mcp:write"))

	list, _ := callTool(t, s, tok, "svc.list_tasks", nil)
	if list.IsError || !strings.Contains(list.text(), `"s1"`) {
		t.Fatalf("owner's token: list_tasks = %s; want the record with its hidden field", list.text())
	}
	created, _ := callTool(t, s, tok, "svc.create_vault", map[string]any{"code": "v2"})
	if created.IsError || created.Structured["code"] != "v2" {
		t.Fatalf("owner's token: create_vault = %s", created.text())
	}

	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+id, map[string]any{"role": "viewer"})
	list, _ = callTool(t, s, tok, "svc.list_tasks", nil)
	if list.IsError || strings.Contains(list.text(), "t1") {
		t.Errorf("viewer's token: list_tasks = %s; want an empty page (rules as a guest)", list.text())
	}
	vault, _ := callTool(t, s, tok, "svc.list_vault", nil)
	if !vault.IsError || !strings.Contains(vault.text(), "HTTP 403") || strings.Contains(vault.text(), "v1") {
		t.Errorf("viewer's token: list_vault = %s; want a 403 tool error", vault.text())
	}
	get, _ := callTool(t, s, tok, "svc.get_vault", map[string]any{"id": created.Structured["id"]})
	if !get.IsError || strings.Contains(get.text(), "v2") {
		t.Errorf("viewer's token: get_vault = %s; want a refusal", get.text())
	}
	write, _ := callTool(t, s, tok, "svc.create_tasks", map[string]any{"title": "x"})
	if !write.IsError {
		t.Errorf("viewer's token: create_tasks = %s; want a refusal", write.text())
	}
	res, a := mcpRPC(t, s, tok, "resources/read", map[string]any{"uri": "svc://record/vault/" + created.Structured["id"].(string)})
	if res.StatusCode != 200 || a.Error == nil || a.Error.Code != -32001 || strings.Contains(string(a.Result), "v2") {
		t.Errorf("viewer's token: read svc://record/vault/...: %d %+v %s; want -32001", res.StatusCode, a.Error, a.Result)
	}
	// A deleted admin's token stops at authentication.
	s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/admins/"+id, nil)
	if res, _ := mcpRPC(t, s, tok, "tools/list", nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("deleted admin's token: %d, want 401", res.StatusCode)
	}
}

// The tools that act: seed (capped), schema and config through the admin
// routes and their roles, run_sql without the SQL console, and the
// arguments checked against the input schemas.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	s := mcpFixture(t)
	h := bearer(mcpTokenOf(t, s, s.AdminToken(t), "mcp:admin"))
	if _, code := callTool(t, s, h, "svc.seed", map[string]any{"collection": "tasks", "count": 1001}); code != -32602 {
		t.Errorf("seed 1001: code %d, want -32602", code)
	}
	if _, code := callTool(t, s, h, "svc.list_tasks", map[string]any{"perPage": "all"}); code != -32602 {
		t.Errorf("list_tasks perPage \"all\": code %d, want -32602", code)
	}
	seed, _ := callTool(t, s, h, "svc.seed", map[string]any{"collection": "people", "count": 3, "seed": 7})
	if seed.IsError || seed.Structured["created"] != float64(3) {
		t.Fatalf("seed people: %s", seed.text())
	}
	seed, _ = callTool(t, s, h, "svc.seed", map[string]any{"collection": "tasks", "count": 150})
	if seed.IsError || seed.Structured["created"] != float64(150) {
		t.Fatalf("seed tasks: %s", seed.text())
	}
	page := apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/tasks?perPage=1&filter="+url.QueryEscape(`owner != ""`), s.AdminHeaders(t, nil)))
	if apitest.Int(t, page["totalItems"]) != 151 {
		t.Errorf("seeded tasks with an owner: %v, want 151 (relations point at people)", page["totalItems"])
	}
	made, code := callTool(t, s, h, "svc.create_collection", map[string]any{"name": "posts", "fields": []any{map[string]any{"name": "title", "type": "text"}}, "view_rule": ""})
	if made.IsError || made.Structured["name"] != "posts" {
		t.Fatalf("create_collection: %d %+v %s", code, made, made.text())
	}
	bad, _ := callTool(t, s, h, "svc.create_collection", map[string]any{"name": "auth"})
	if !bad.IsError || !strings.Contains(bad.text(), "HTTP 422") {
		t.Errorf("create_collection with a reserved name: %s; want a 422 tool error", bad.text())
	}
	set, _ := callTool(t, s, h, "svc.update_setting", map[string]any{"key": "hooks.slow_ms", "value": "1500"})
	if set.IsError {
		t.Errorf("update_setting: %s", set.text())
	}
	if got := apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/admin/settings", s.AdminHeaders(t, nil))); !strings.Contains(string(mustJSON(t, got)), `"hooks.slow_ms":"1500"`) {
		t.Errorf("the setting did not change: %v", got)
	}
	// run_sql: read-only by default (decided by the SQL console), 100
	// rows, plans, writes through the log without volatile functions, and
	// no write at all through a read-only bridge.
	sqlCases := []struct {
		name     string
		args     map[string]any
		readOnly bool
		isError  bool
		want     string
	}{
		{"a read", map[string]any{"sql": "SELECT title FROM tasks WHERE secret = ?", "params": []any{"s1"}}, false, false, `"rows": [`},
		{"150 rows", map[string]any{"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 150) SELECT x FROM c"}, false, false, `"rowCount": 100`},
		{"a plan", map[string]any{"sql": "SELECT * FROM tasks WHERE title = ?", "params": []any{"t1"}, "dry_run": true}, false, false, `"detail"`},
		{"a write without allow_write", map[string]any{"sql": "DELETE FROM tasks"}, false, true, "SVC_READONLY"},
		{"a write", map[string]any{"sql": "UPDATE tasks SET title = ? WHERE title = ?", "params": []any{"t9", "t1"}, "allow_write": true}, false, false, `"changes": 1`},
		{"a volatile write", map[string]any{"sql": "UPDATE tasks SET title = random()", "allow_write": true}, false, true, "SVC_NOT_DETERMINISTIC"},
		{"a write through a read-only bridge", map[string]any{"sql": "DELETE FROM tasks", "allow_write": true}, true, true, "read-only"},
	}
	for _, c := range sqlCases {
		hh := h
		if c.readOnly {
			hh = map[string]string{"Authorization": h["Authorization"], "X-Svc-Mcp-Read-Only": "1"}
		}
		got, code := callTool(t, s, hh, "svc.run_sql", c.args)
		if code != 0 || got.IsError != c.isError || !strings.Contains(got.text(), c.want) {
			t.Errorf("run_sql, %s: code %d, isError %v, %s; want %q", c.name, code, got.IsError, got.text(), c.want)
		}
	}
	if got := string(must(t, s, "GET", "/api/v1/tasks?filter="+url.QueryEscape(`title = "t9"`), s.AdminHeaders(t, nil))); !strings.Contains(got, `"totalItems":1`) {
		t.Errorf("the write through the log is not there: %s", got)
	}
	// Every tool's input schema resolves (a collection with every field
	// type): a call with no arguments is answered, never -32603.
	s.CreateCollection(t, map[string]any{"name": "every", "fields": []map[string]any{
		{"name": "t", "type": "text", "min": 1, "max": 9}, {"name": "e", "type": "editor"}, {"name": "m", "type": "email"},
		{"name": "u", "type": "url"}, {"name": "n", "type": "number", "integer": true, "min": 0}, {"name": "b", "type": "bool"},
		{"name": "d", "type": "date"}, {"name": "a", "type": "autodate", "on_create": true}, {"name": "s", "type": "select", "values": []string{"x", "y"}, "multiple": true},
		{"name": "j", "type": "json"}, {"name": "g", "type": "geoPoint"}, {"name": "r", "type": "relation", "collection": "tasks"},
		{"name": "f", "type": "file"}, {"name": "p", "type": "password"}, {"name": "v", "type": "vector", "dimensions": 3},
	}})
	for _, name := range toolNames(t, s, h) {
		if _, code := callTool(t, s, h, name, nil); code == -32603 {
			t.Errorf("%s with no arguments: -32603", name)
		}
	}
	seeded, _ := callTool(t, s, h, "svc.seed", map[string]any{"collection": "every", "count": 20})
	if seeded.IsError {
		t.Errorf("seed a collection with every field type: %s", seeded.text())
	}
	audit := string(must(t, s, "GET", "/api/v1/admin/audit-log?actionPrefix=collections", s.AdminHeaders(t, nil)))
	if !strings.Contains(audit, `"path":"/api/v1/admin/collections"`) || strings.Count(audit, "collections.create") < 4 {
		t.Errorf("create_collection is not in the audit log: %s", audit)
	}
}

// The transport: authentication, Origin, sessions, notifications,
// malformed messages, the SSE stream and its list_changed notification.
func TestMCPTransport(t *testing.T) {
	t.Parallel()
	s := mcpFixture(t)
	tok := mcpTokenOf(t, s, s.AdminToken(t), "mcp:read")
	h := bearer(tok)
	send := func(headers map[string]string, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", s.URL+"/api/v1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := s.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		return res, b.String()
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{"Authorization": "Bearer " + tok}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

	res, body := send(with(nil), init)
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %d session %q %s", res.StatusCode, sid, body)
	}
	checks := []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		want    string
	}{
		{"ping in the session", with(map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}), ping, 200, `"id":7,"result":{}`},
		{"a forged session", with(map[string]string{"Mcp-Session-Id": sid + "x"}), ping, 404, "initialize again"},
		{"another token's session", bearer(mcpTokenOf(t, s, s.AdminToken(t), "mcp:read")), ping, 200, `"result"`},
		{"an unknown protocol version", with(map[string]string{"Mcp-Protocol-Version": "1999-01-01"}), ping, 400, "Unsupported MCP-Protocol-Version"},
		{"no credentials", nil, ping, 401, "Authentication required"},
		{"an admin session", s.AdminHeaders(t, nil), ping, 403, "mcp:* scope"},
		{"a token without mcp scope", bearer(mintToken(t, s, "read")), ping, 403, "mcp:* scope"},
		{"a foreign Origin", with(map[string]string{"Origin": "http://evil.example"}), ping, 403, "Origin not allowed"},
		{"a loopback Origin", with(map[string]string{"Origin": "http://localhost:5173"}), ping, 200, `"result"`},
		{"a notification", with(nil), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ""},
		{"a batch", with(nil), "[" + ping + "]", 400, `"code":-32600`},
		{"malformed JSON", with(nil), `{"jsonrpc":`, 400, `"code":-32700`},
		{"not JSON-RPC 2.0", with(nil), `{"id":1,"method":"ping"}`, 400, `"code":-32600`},
		{"an unknown method", with(nil), `{"jsonrpc":"2.0","id":2,"method":"sampling/nothing"}`, 200, `"code":-32601`},
		{"SSE answer", with(map[string]string{"Accept": "text/event-stream"}), ping, 200, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"},
		{"a prompt without its argument", with(nil), `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"design-collection"}}`, 200, `"code":-32602`},
	}
	for _, c := range checks {
		if strings.Contains(c.name, "another token") {
			c.headers["Mcp-Session-Id"] = sid
			c.status, c.want = 404, "initialize again"
		}
		res, body := send(c.headers, c.body)
		if res.StatusCode != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %q; want %d with %q", c.name, res.StatusCode, body, c.status, c.want)
		}
	}
	if res, _ := s.Do(t, "DELETE", "/api/v1/mcp", nil, h); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d, want 405", res.StatusCode)
	}

	// The stream: a collection created while it is open is announced.
	for _, path := range []string{"/api/v1/mcp", "/api/v1/mcp/events"} {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		sc := bufio.NewScanner(res.Body)
		sc.Scan() // the opening comment
		s.CreateCollection(t, map[string]any{"name": "c" + strings.ReplaceAll(path[1:], "/", "_"), "fields": []map[string]any{}})
		got := ""
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				got = sc.Text()
				break
			}
		}
		if !strings.Contains(got, `"method":"notifications/tools/list_changed"`) {
			t.Errorf("GET %s: no list_changed after a new collection (got %q)", path, got)
		}
		res.Body.Close()
		cancel()
	}
	if res, _ := s.Do(t, "GET", "/api/v1/mcp/events", nil, map[string]string{"Accept": "text/event-stream"}); res.StatusCode != 401 {
		t.Errorf("GET the stream without a token: %d, want 401", res.StatusCode)
	}
}

// read_logs and svc://logs/{date} read the node's log folder: the day's
// request lines, oldest first, the newest last, and never a credential.
func TestMCPReadLogs(t *testing.T) {
	t.Parallel()
	s := mcpFixture(t)
	session := s.AdminToken(t)
	agent := mcpTokenOf(t, s, session, "mcp:read")
	h := bearer(agent)
	if res, _ := s.Do(t, "GET", "/api/v1/admin/collections/mcp-log-marker", nil, bearer(session)); res.StatusCode != http.StatusNotFound {
		t.Fatalf("marker: %d", res.StatusCode)
	}
	today := time.Now().UTC().Format("2006-01-02")
	got, code := callTool(t, s, h, "svc.read_logs", map[string]any{"limit": 3})
	if code != 0 || got.IsError || got.Structured["date"] != today {
		t.Fatalf("read_logs: %d %s", code, got.text())
	}
	lines, _ := got.Structured["lines"].([]any)
	if len(lines) != 3 {
		t.Fatalf("read_logs limit 3: %d lines: %s", len(lines), got.text())
	}
	last := apitest.Obj(t, lines[2])
	if last["kind"] != "request" || last["path"] != "/api/v1/admin/collections/mcp-log-marker" || last["status"] != float64(404) {
		t.Errorf("the newest line, last: %v", last)
	}
	if strings.Contains(got.text(), session) || strings.Contains(got.text(), agent) {
		t.Errorf("read_logs shows a token: %s", got.text())
	}
	var read struct {
		Contents []struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"contents"`
	}
	mcpResult(t, s, h, "resources/read", map[string]any{"uri": "svc://logs/" + today}, &read)
	if len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, `"path": "/api/v1/admin/collections/mcp-log-marker"`) ||
		!strings.Contains(read.Contents[0].Text, `"principal": {`) {
		t.Errorf("svc://logs/%s: %+v", today, read.Contents)
	}
	mcpResult(t, s, h, "resources/read", map[string]any{"uri": "svc://logs/2001-01-01"}, &read)
	if len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, `"lines": []`) {
		t.Errorf("a day without a file: %+v", read.Contents)
	}
	bad, _ := callTool(t, s, h, "svc.read_logs", map[string]any{"date": "2001-02-30"})
	if !bad.IsError {
		t.Errorf("read_logs of 2001-02-30: %s", bad.text())
	}
}
