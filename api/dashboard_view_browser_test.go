package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardViewCollectionBrowser creates and edits a view collection
// in headless Chromium: a query without an id column is refused with the
// server's message under the query; fixed, the view is created; its query
// is edited on the records page, a bad one refused, a good one saved with
// the fields the server inferred.
func TestDashboardViewCollectionBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t) // creates the first admin
	srv.CreateCollection(t, map[string]any{"name": "posts", "fields": []any{map[string]any{"name": "title", "type": "text"}}})
	srv.CreateRecord(t, "posts", map[string]any{"title": "hello"})

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("New collection")
	p.waitFor("the new collection form", `document.querySelector("input[name=name]")`, 10*time.Second)
	p.fill("input[name=name]", "stats")
	p.choose("select[name=type]", "view")
	p.mustJS(`!document.querySelector("textarea[name=view_query]").closest("[hidden]") && !!document.querySelector(".fields").closest("[hidden]")`)
	p.checkNamed("new view")
	p.fill("textarea[name=view_query]", "SELECT title FROM posts")
	p.press("Create collection")
	queryErr := `document.getElementById(document.querySelector("textarea[name=view_query]").getAttribute("aria-describedby")).textContent`
	p.waitFor("the query's error", queryErr+`.includes("id column")`, 10*time.Second)
	p.fill("textarea[name=view_query]", "SELECT id, title FROM posts")
	p.press("Create collection")
	p.waitFor("the view's records", `location.pathname === "/_/collections/stats" && document.querySelector("#records") && document.querySelector("#records tbody").textContent.includes("hello")`, 10*time.Second)

	// Its query, edited.
	p.mustJS(`document.querySelector("#schema summary").click() === undefined`)
	p.waitFor("the query form", `document.querySelector("textarea[name=edit_view_query]")`, 10*time.Second)
	p.checkNamed("view schema")
	p.fill("textarea[name=edit_view_query]", "SELECT id, nope FROM posts")
	p.press("Save query")
	p.waitFor("the refusal", `[...document.querySelectorAll("#schema [role=alert]")].some((e) => e.textContent.includes("nope"))`, 10*time.Second)
	p.fill("textarea[name=edit_view_query]", "SELECT id, title AS headline FROM posts")
	p.press("Save query")
	p.waitFor("the saved query", `document.querySelector("#schema").textContent.includes("fields: headline (text)")`, 10*time.Second)
	coll := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/stats", nil)["data"])
	if q, _ := coll["view_query"].(string); !strings.Contains(q, "headline") {
		t.Fatalf("view_query = %q", q)
	}
}
