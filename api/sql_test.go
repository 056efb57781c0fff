package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

const sqlRun = "/api/v1/admin/sql/run"

// runSQL posts a run as the owner and returns its data.
func runSQL(t testing.TB, s *apitest.Server, body map[string]any) map[string]any {
	t.Helper()
	return apitest.Obj(t, s.MustAdmin(t, http.StatusOK, "POST", sqlRun, body)["data"])
}

// wantCode checks a failed run's code.
func wantCode(t testing.TB, what string, d map[string]any, code string) {
	t.Helper()
	if d["ok"] != false || d["errorCode"] != code {
		t.Errorf("%s: ok %v code %v (%v), want %s", what, d["ok"], d["errorCode"], d["error"], code)
	}
}

// TestSQLReadonlyCannotWrite: whatever its text, a statement that would
// change anything is SVC_READONLY before it runs, and nothing changed.
func TestSQLReadonlyCannotWrite(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	s.CreateRecord(t, "posts", map[string]any{"title": "one"})
	for _, q := range []string{
		"DELETE FROM posts",
		"WITH x AS (SELECT id FROM posts) DELETE FROM posts WHERE id IN (SELECT id FROM x)",
		"WITH x AS (SELECT 1) UPDATE posts SET title = 'two'",
		"INSERT INTO posts (id, created, updated, title) VALUES ('aaaaaaaaaaaaaaa', 1, 1, 'x') RETURNING id",
		"PRAGMA user_version = 5",
		"PRAGMA journal_mode = delete",
		"PRAGMA writable_schema = 1",
		"ATTACH DATABASE ':memory:' AS other",
		"VACUUM",
		"VACUUM INTO '" + t.TempDir() + "/copy.db'",
		"CREATE TABLE t (x)",
		"CREATE TEMP TABLE t (x)",
		"DROP TABLE posts",
		"ALTER TABLE posts ADD COLUMN y",
		"REINDEX",
		"ANALYZE",
	} {
		wantCode(t, q, runSQL(t, s, map[string]any{"sql": q, "mode": "readonly"}), "SVC_READONLY")
	}
	d := runSQL(t, s, map[string]any{"sql": "SELECT title, (SELECT count(*) FROM sqlite_schema WHERE name = 't') FROM posts"})
	if d["ok"] != true || apitest.List(t, d["rows"])[0].([]any)[0] != "one" || fmt.Sprint(apitest.List(t, d["rows"])[0].([]any)[1]) != "0" {
		t.Errorf("after the refused writes: %v", d)
	}
	d = runSQL(t, s, map[string]any{"sql": "PRAGMA user_version"})
	if d["ok"] != true || fmt.Sprint(apitest.List(t, d["rows"])[0].([]any)[0]) == "5" {
		t.Errorf("user_version: %v", d)
	}
	d = runSQL(t, s, map[string]any{"sql": "PRAGMA table_info(posts)"})
	if d["ok"] != true || fmt.Sprint(d["rowCount"]) != "4" {
		t.Errorf("table_info: %v", d)
	}
}

// TestSQLRunLimitsAndCodes: parameters, the row cap, the budget, every
// error code at HTTP 200, and the requests refused outright.
func TestSQLRunLimitsAndCodes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	d := runSQL(t, s, map[string]any{"sql": "SELECT ? AS n, ? AS s, ? AS b, ? AS f, ? AS z", "params": []any{42, "hi", true, 1.5, nil}})
	if d["ok"] != true || strings.Join(toStrings(d["columns"]), ",") != "n,s,b,f,z" || d["mode"] != "readonly" || d["node"] == "" {
		t.Fatalf("params: %v", d)
	}
	if row := apitest.List(t, d["rows"])[0].([]any); fmt.Sprint(row[0]) != "42" || row[1] != "hi" || fmt.Sprint(row[2]) != "1" || fmt.Sprint(row[3]) != "1.5" || row[4] != nil {
		t.Errorf("row %v", row)
	}
	d = runSQL(t, s, map[string]any{"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1500) SELECT x FROM c"})
	if d["ok"] != true || fmt.Sprint(d["rowCount"]) != "1000" || d["truncated"] != true || len(apitest.List(t, d["rows"])) != 1000 {
		t.Errorf("cap: %v %v", d["rowCount"], d["truncated"])
	}
	d = runSQL(t, s, map[string]any{"sql": "SELECT 1 UNION ALL SELECT 2"})
	if d["truncated"] != false || fmt.Sprint(d["rowCount"]) != "2" {
		t.Errorf("small: %v", d)
	}
	d = runSQL(t, s, map[string]any{"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", "timeoutMs": 150})
	wantCode(t, "budget", d, "SVC_TIMEOUT")
	if ms, _ := d["durationMs"].(json.Number).Int64(); ms < 140 || ms > 5000 {
		t.Errorf("interrupted after %v ms", ms)
	}
	wantCode(t, "syntax", runSQL(t, s, map[string]any{"sql": "SELEC 1"}), "SVC_SYNTAX")
	wantCode(t, "empty", runSQL(t, s, map[string]any{"sql": "  ; "}), "SVC_SYNTAX")
	wantCode(t, "two statements", runSQL(t, s, map[string]any{"sql": "SELECT 1; SELECT 2"}), "SVC_SYNTAX")
	wantCode(t, "no table", runSQL(t, s, map[string]any{"sql": "SELECT * FROM nope"}), "SVC_SQL_ERROR")
	wantCode(t, "parameters", runSQL(t, s, map[string]any{"sql": "SELECT ?", "params": []any{}}), "SVC_SQL_ERROR")
	wantCode(t, "internal table", runSQL(t, s, map[string]any{"sql": "SELECT * FROM _svc_admins"}), "SVC_FORBIDDEN")
	wantCode(t, "internal via a view", runSQL(t, s, map[string]any{"sql": "SELECT (SELECT count(*) FROM _svc_settings)"}), "SVC_FORBIDDEN")
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "budget too small", Admin: true, Method: "POST", URL: sqlRun, Body: map[string]any{"sql": "SELECT 1", "timeoutMs": 99},
			ExpectedStatus: 422, ExpectedContent: []string{`"timeoutMs":"Must be between 100 and 30000 milliseconds"`}},
		{Name: "budget too large", Admin: true, Method: "POST", URL: sqlRun, Body: map[string]any{"sql": "SELECT 1", "timeoutMs": 30001}, ExpectedStatus: 422},
		{Name: "unknown mode", Admin: true, Method: "POST", URL: sqlRun, Body: map[string]any{"sql": "SELECT 1", "mode": "write"},
			ExpectedStatus: 422, ExpectedContent: []string{`"mode":"Must be readonly or sandbox"`}},
		{Name: "anonymous", Method: "POST", URL: sqlRun, Body: map[string]any{"sql": "SELECT 1"}, ExpectedStatus: 401},
		{Name: "schema", Admin: true, URL: "/api/v1/admin/sql/schema", ExpectedStatus: 200, ExpectedContent: []string{`{"data":{"tables":[`}, NotExpectedContent: []string{`_svc_`}},
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestSQLSecretsReadAsNull: password hashes read as NULL, even in a
// WHERE clause; the schema marks them secret.
func TestSQLSecretsReadAsNull(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	signUp(t, s, "someone@example.com")
	d := runSQL(t, s, map[string]any{"sql": "SELECT email, password FROM users"})
	if d["ok"] != true || fmt.Sprint(d["rowCount"]) != "1" {
		t.Fatalf("%v", d)
	}
	if row := apitest.List(t, d["rows"])[0].([]any); row[0] != "someone@example.com" || row[1] != nil {
		t.Errorf("row %v", row)
	}
	d = runSQL(t, s, map[string]any{"sql": "SELECT count(*) FROM users WHERE password LIKE '$argon2id$%'"})
	if fmt.Sprint(apitest.List(t, d["rows"])[0].([]any)[0]) != "0" {
		t.Errorf("password oracle: %v", d)
	}
	d = runSQL(t, s, map[string]any{"sql": "SELECT * FROM users", "mode": "sandbox"})
	if d["ok"] != true || strings.Contains(fmt.Sprint(d), "argon2") {
		t.Errorf("sandbox: %v", d)
	}
	_, body := s.AdminDo(t, "GET", "/api/v1/admin/sql/schema", nil)
	if !strings.Contains(string(body), `"primaryKey":false,"secret":true}`) {
		t.Errorf("schema: %s", body)
	}
	if !strings.Contains(string(body), `"name":"users","type":"table"`) || !strings.Contains(string(body), `"rowCount":1`) {
		t.Errorf("schema: %s", body)
	}
}

// TestSQLSandbox: writes stay in the caller's copy, the answer names the
// node, reset rebuilds it, and the sandbox still refuses files and
// internal tables.
func TestSQLSandbox(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	s.CreateRecord(t, "posts", map[string]any{"title": "one"})
	sb := func(q string) map[string]any { return runSQL(t, s, map[string]any{"sql": q, "mode": "sandbox"}) }
	d := sb("INSERT INTO posts (id, created, updated, title) VALUES ('bbbbbbbbbbbbbbb', 1, 1, 'two') RETURNING title")
	if d["ok"] != true || d["mode"] != "sandbox" || d["node"] == "" || apitest.List(t, d["rows"])[0].([]any)[0] != "two" {
		t.Fatalf("insert: %v", d)
	}
	if d := sb("SELECT count(*) FROM posts"); fmt.Sprint(apitest.List(t, d["rows"])[0].([]any)[0]) != "2" {
		t.Errorf("sandbox count %v", d)
	}
	if d := runSQL(t, s, map[string]any{"sql": "SELECT count(*) FROM posts"}); fmt.Sprint(apitest.List(t, d["rows"])[0].([]any)[0]) != "1" {
		t.Errorf("the replica changed: %v", d)
	}
	if d := sb("CREATE TABLE scratch (x)"); d["ok"] != true {
		t.Errorf("create in sandbox: %v", d)
	}
	if d := sb("PRAGMA user_version = 7"); d["ok"] != true {
		t.Errorf("user_version in sandbox: %v", d)
	}
	wantCode(t, "attach", sb("ATTACH DATABASE ':memory:' AS x"), "SVC_FORBIDDEN")
	wantCode(t, "vacuum into", sb("VACUUM INTO '"+t.TempDir()+"/x.db'"), "SVC_FORBIDDEN")
	wantCode(t, "internal write", sb("DELETE FROM _svc_admins"), "SVC_FORBIDDEN")
	wantCode(t, "internal drop", sb("DROP TABLE _svc_settings"), "SVC_FORBIDDEN")
	wantCode(t, "pragma", sb("PRAGMA temp_store_directory = '/tmp'"), "SVC_FORBIDDEN")
	// Another admin has a sandbox of their own.
	_, dev := newAdmin(t, s, "dev@example.com", "developer")
	res, body := s.Do(t, "POST", sqlRun, map[string]any{"sql": "SELECT count(*) FROM posts", "mode": "sandbox"}, map[string]string{"Authorization": "Bearer " + dev})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"rows":[[1]]`) {
		t.Errorf("other admin's sandbox: %d %s", res.StatusCode, body)
	}
	reset := s.MustAdmin(t, http.StatusOK, "POST", "/api/v1/admin/sql/sandbox/reset", nil)
	if apitest.Obj(t, reset["data"])["node"] == "" {
		t.Errorf("reset: %v", reset)
	}
	if d := sb("SELECT count(*) FROM posts"); fmt.Sprint(apitest.List(t, d["rows"])[0].([]any)[0]) != "1" {
		t.Errorf("after reset: %v", d)
	}
	wantCode(t, "table gone after reset", sb("SELECT * FROM scratch"), "SVC_SQL_ERROR")
}

// TestSQLSavedQueries: create, list owner-scoped, run with saved and
// given parameters, patch and delete by the owner only; all audited.
func TestSQLSavedQueries(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	const qs = "/api/v1/admin/sql/queries"
	_, dev := newAdmin(t, s, "dev@example.com", "developer")
	devH := map[string]string{"Authorization": "Bearer " + dev}
	q := apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, "POST", qs, map[string]any{"name": "add", "sql": "SELECT ? + ?", "params": []any{1, 2}})["data"])
	id, _ := q["id"].(string)
	if !strings.HasPrefix(id, "sql_") || q["mode"] != "readonly" || q["owner_id"] == "" || q["name"] != "add" {
		t.Fatalf("created %v", q)
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "invalid", Admin: true, Method: "POST", URL: qs, Body: map[string]any{"name": "", "sql": " ", "mode": "x", "params": 3},
			ExpectedStatus: 422, ExpectedContent: []string{`"name":`, `"sql":`, `"mode":`, `"params":`}},
		{Name: "list", Admin: true, URL: qs, ExpectedStatus: 200, ExpectedContent: []string{`"id":"` + id + `"`, `"params":[1,2]`}},
		{Name: "other admin's list", Headers: devH, URL: qs, ExpectedStatus: 200, ExpectedContent: []string{`{"data":[]}`}},
		{Name: "run with saved params", Admin: true, Method: "POST", URL: qs + "/" + id + "/run", ExpectedStatus: 200, ExpectedContent: []string{`"ok":true`, `"rows":[[3]]`}},
		{Name: "run with given params", Admin: true, Method: "POST", URL: qs + "/" + id + "/run", Body: map[string]any{"params": []any{10, 20}},
			ExpectedStatus: 200, ExpectedContent: []string{`"rows":[[30]]`}},
		{Name: "other admin runs", Headers: devH, Method: "POST", URL: qs + "/" + id + "/run", ExpectedStatus: 403},
		{Name: "other admin patches", Headers: devH, Method: "PATCH", URL: qs + "/" + id, Body: map[string]any{"name": "mine"}, ExpectedStatus: 403},
		{Name: "other admin deletes", Headers: devH, Method: "DELETE", URL: qs + "/" + id, ExpectedStatus: 403},
		{Name: "patch", Admin: true, Method: "PATCH", URL: qs + "/" + id, Body: map[string]any{"sql": "DELETE FROM _svc_admins", "mode": "sandbox", "params": []any{}},
			ExpectedStatus: 200, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"}, ExpectedContent: []string{`"name":"add"`, `"mode":"sandbox"`}},
		{Name: "run the patched", Admin: true, Method: "POST", URL: qs + "/" + id + "/run", ExpectedStatus: 200, ExpectedContent: []string{`"ok":false`, `"errorCode":"SVC_FORBIDDEN"`}},
		{Name: "patch unknown", Admin: true, Method: "PATCH", URL: qs + "/sql_nope", Body: map[string]any{"name": "x"}, ExpectedStatus: 404},
		{Name: "delete", Admin: true, Method: "DELETE", URL: qs + "/" + id, ExpectedStatus: 204},
		{Name: "delete again", Admin: true, Method: "DELETE", URL: qs + "/" + id, ExpectedStatus: 404},
		{Name: "run deleted", Admin: true, Method: "POST", URL: qs + "/" + id + "/run", ExpectedStatus: 404},
		{Name: "editor may not", Headers: roleHeaders(t, s, "editor"), URL: qs, ExpectedStatus: 403},
	})
	audit := string(must(t, s, http.MethodGet, "/api/v1/admin/audit-log?perPage=100", s.AdminHeaders(t, nil)))
	for _, want := range []string{`"action":"sql.`} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %s: %s", want, audit)
		}
	}
}

func roleHeaders(t testing.TB, s *apitest.Server, role string) map[string]string {
	_, tok := newAdmin(t, s, role+"@example.com", role)
	return map[string]string{"Authorization": "Bearer " + tok}
}
