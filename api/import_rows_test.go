package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/engine/password"
)

const importRowsURL = "/api/v1/admin/import-rows"

// TestImportRows: an owner imports records with their own ids, created
// and updated times and, in an auth collection, a password hash made
// elsewhere; the user signs in with the password behind that hash. A row
// whose id exists is skipped (a second run changes nothing), a row whose
// unique value is taken fails alone, bad rows fail before the command,
// and roles below owner are refused.
func TestImportRows(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text", "required", true), f("views", "number"),
		f("slug", "text")})))
	s.CreateCollection(t, usersCollection())
	adm := s.AdminHeaders(t, nil)

	created := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC).Unix()
	rows := []map[string]any{
		{"id": "pbpost000000001", "created": created, "updated": created + 3600, "values": map[string]any{"title": "first", "views": 42, "slug": "a"}},
		{"id": "pbpost000000002", "created": created, "values": map[string]any{"title": "second", "slug": "b"}},
		{"id": "pbpost000000004", "created": created, "values": map[string]any{"views": 1}}, // no title
	}
	res := historyDo(t, s, "POST", importRowsURL, map[string]any{"collection": "posts", "rows": rows}, adm, http.StatusOK)
	out := apitest.Obj(t, res["data"])
	if got := joinIDs(out["created"]); got != "pbpost000000001,pbpost000000002" {
		t.Fatalf("created %s; answer %v", got, out)
	}
	failed := out["failed"].([]any)
	if len(failed) != 1 || !strings.Contains(toJSON(failed), "pbpost000000004") || !strings.Contains(toJSON(failed), "title") {
		t.Fatalf("failed %v", failed)
	}
	rec := apitest.Obj(t, historyDo(t, s, "GET", "/api/v1/posts/pbpost000000001", nil, adm, http.StatusOK)["data"])
	if rec["title"] != "first" || rec["views"] != float64(42) || rec["created"] != float64(created) || rec["updated"] != float64(created+3600) {
		t.Fatalf("imported record %v", rec)
	}

	// Again: every row that exists is skipped, nothing changes.
	res = historyDo(t, s, "POST", importRowsURL, map[string]any{"collection": "posts", "rows": rows[:2]}, adm, http.StatusOK)
	out = apitest.Obj(t, res["data"])
	if got := joinIDs(out["skipped"]); got != "pbpost000000001,pbpost000000002" || joinIDs(out["created"]) != "" {
		t.Fatalf("second run %v", out)
	}

	// A user with a hash made elsewhere signs in with its password.
	hash, err := password.Hash("an imported password", password.Default)
	if err != nil {
		t.Fatal(err)
	}
	user := map[string]any{"id": "pbuser000000001", "created": created, "password_hash": hash,
		"values": map[string]any{"email": "imported@example.com", "name": "Imp", "email_verified": true}}
	twin := map[string]any{"id": "pbuser000000002", "created": created, "password_hash": hash, "values": map[string]any{"email": "imported@example.com"}}
	res = historyDo(t, s, "POST", importRowsURL, map[string]any{"collection": "users", "rows": []any{user, twin}}, adm, http.StatusOK)
	out = apitest.Obj(t, res["data"])
	if got := joinIDs(out["created"]); got != "pbuser000000001" || !strings.Contains(toJSON(out["failed"]), `"id":"pbuser000000002"`) || !strings.Contains(toJSON(out["failed"]), "email") {
		t.Fatalf("user import (the second row's email is the first's) %v", res)
	}
	login := historyDo(t, s, "POST", "/api/v1/auth/users/login", map[string]any{"email": "imported@example.com", "password": "an imported password"}, nil, http.StatusOK)
	if apitest.Obj(t, login["data"])["token"] == "" {
		t.Fatalf("login %v", login)
	}
	u := apitest.Obj(t, historyDo(t, s, "GET", "/api/v1/users/pbuser000000001", nil, adm, http.StatusOK)["data"])
	if strings.Contains(toJSON(u), "argon2") || u["email_verified"] != true {
		t.Fatalf("user as read %v", u)
	}

	// Refusals. A user without a hash has no password to sign in with: refused.
	res = historyDo(t, s, "POST", importRowsURL, map[string]any{"collection": "users", "rows": []any{
		map[string]any{"id": "pbuser000000003", "created": created, "values": map[string]any{"email": "nohash@example.com"}}}}, adm, http.StatusOK)
	if !strings.Contains(toJSON(res), "password") {
		t.Fatalf("a user without a hash: %v", res)
	}
	bad := []struct {
		name string
		body map[string]any
		want int
	}{
		{"no collection", map[string]any{"rows": rows[:1]}, http.StatusUnprocessableEntity},
		{"no rows", map[string]any{"collection": "posts", "rows": []any{}}, http.StatusUnprocessableEntity},
		{"unknown collection", map[string]any{"collection": "nope", "rows": rows[:1]}, http.StatusNotFound},
	}
	for _, b := range bad {
		historyDo(t, s, "POST", importRowsURL, b.body, adm, b.want)
	}
	res = historyDo(t, s, "POST", importRowsURL, map[string]any{"collection": "posts", "rows": []any{
		map[string]any{"id": "pbpost000000009", "created": created, "password_hash": "$2a$10$x", "values": map[string]any{"title": "x"}},
		map[string]any{"id": "pbpost000000010", "created": 0, "values": map[string]any{"title": "x"}},
	}}, adm, http.StatusOK)
	if f := apitest.Obj(t, res["data"])["failed"].([]any); len(f) != 2 || !strings.Contains(toJSON(f), "password_hash") || !strings.Contains(toJSON(f), "created") {
		t.Fatalf("bad rows %v", res)
	}
	for _, role := range []string{"viewer", "editor", "developer"} {
		_, tok := newAdmin(t, s, role+"@example.com", role)
		historyDo(t, s, "POST", importRowsURL, map[string]any{"collection": "posts", "rows": rows[:1]}, bearer(tok), http.StatusForbidden)
	}
	historyDo(t, s, "POST", importRowsURL, map[string]any{"collection": "posts", "rows": rows[:1]}, nil, http.StatusUnauthorized)
}

// joinIDs joins the ids of a list answer.
func joinIDs(v any) string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		out = append(out, x.(string))
	}
	return strings.Join(out, ",")
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
