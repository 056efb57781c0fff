package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardSQLBrowser uses the SQL console in headless Chromium: a
// read-only statement with a parameter and its result table, a write
// refused in read-only mode with the server's errorCode, a truncated
// answer, a write in the sandbox that leaves the replica alone, a saved
// query run from the list and deleted. A viewer gets no SQL link.
func TestDashboardSQLBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t) // creates the first admin
	srv.CreateCollection(t, map[string]any{"name": "sql_demo", "fields": []any{map[string]any{"name": "title", "type": "text"}}})
	srv.CreateRecord(t, "sql_demo", map[string]any{"title": "hello"})

	// The page's URL survives a reload: the server answers it with the page.
	if res, _ := srv.Do(t, http.MethodGet, "/_/sql", nil, nil); res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /_/sql = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("SQL")
	p.waitFor("the console", `document.querySelector("textarea[name=sql]")`, 10*time.Second)
	p.checkNamed("sql console")

	cell := `document.querySelector("#sql-result tbody td") && document.querySelector("#sql-result tbody td").textContent`
	p.fill("textarea[name=sql]", "SELECT title, length(title) AS n FROM sql_demo WHERE title = ?")
	p.fill("input[name=sql_params]", `["hello"]`)
	p.press("Run")
	p.waitFor("the result", cell+` === "hello" && document.getElementById("sql-status").textContent.startsWith("1 rows")`, 10*time.Second)
	p.mustJS(`[...document.querySelectorAll("#sql-result th")].map((e) => e.textContent).join(",") === "title,n"`)

	// A write in read-only mode: refused by the server, its code shown.
	p.fill("input[name=sql_params]", "")
	p.fill("textarea[name=sql]", "DELETE FROM sql_demo")
	p.press("Run")
	p.waitFor("the refusal", `document.getElementById("sql-error").textContent.startsWith("SVC_READONLY")`, 10*time.Second)

	// More than 1000 rows: truncated.
	p.fill("textarea[name=sql]", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) SELECT x FROM c")
	p.press("Run")
	p.waitFor("the truncated answer", `document.getElementById("sql-status").textContent.startsWith("1000 rows (truncated")`, 10*time.Second)

	// The sandbox takes a write; the replica keeps its value.
	p.choose("select[name=sql_mode]", "sandbox")
	p.fill("textarea[name=sql]", "UPDATE sql_demo SET title = upper(title) RETURNING title")
	p.press("Run")
	p.waitFor("the sandbox's answer", cell+` === "HELLO"`, 20*time.Second)
	rows := srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/sql_demo", nil)["data"].([]any)
	if got := apitest.Obj(t, rows[0])["title"]; got != "hello" {
		t.Fatalf("the sandbox's write reached the collection: %v", got)
	}

	// A saved query: saved, listed, run from the list, deleted.
	p.choose("select[name=sql_mode]", "readonly")
	p.fill("textarea[name=sql]", "SELECT title FROM sql_demo WHERE title LIKE ?")
	p.fill("input[name=sql_params]", `["h%"]`)
	p.fill("input[name=sql_save_name]", "titles like")
	p.press("Save query")
	p.waitFor("the saved query", `document.querySelector("#sql-saved") && document.querySelector("#sql-saved").textContent.includes("titles like")`, 10*time.Second)
	p.fill("textarea[name=sql]", "SELECT 1")
	p.fill("input[name=sql_params]", "")
	p.press("Run")
	p.waitFor("another result", cell+` === "1"`, 10*time.Second)
	p.press("Run titles like")
	p.waitFor("the saved query's result", cell+` === "hello"`, 10*time.Second)
	p.checkNamed("sql console with a saved query")
	p.shot("dashboard-sql")
	p.press("Delete titles like")
	p.press("Confirm delete")
	p.waitFor("no saved queries", `!document.querySelector("#sql-saved") && document.body.textContent.includes("No saved queries.")`, 10*time.Second)
	if list := srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/sql/queries", nil)["data"].([]any); len(list) != 0 {
		t.Fatalf("saved queries after the delete: %v", list)
	}

	// A viewer has no SQL console.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	p.waitFor("the collections list", `document.querySelector("h1") && document.querySelector("h1").textContent === "Collections"`, 10*time.Second)
	if p.hasControl("SQL") {
		t.Error("a viewer sees the SQL link")
	}
}
