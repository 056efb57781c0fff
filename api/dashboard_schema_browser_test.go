package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardSchemaBrowser edits an existing collection's schema in
// headless Chromium as a developer would: rename a field (its values
// kept), remove one (behind a confirmation naming it), add one; a change
// the server refuses shows its 422 details; create and drop an index;
// delete the collection through its confirmation.
func TestDashboardSchemaBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t) // creates the first admin
	srv.CreateCollection(t, map[string]any{"name": "items", "view_rule": "", "fields": []any{
		map[string]any{"name": "label", "type": "text"},
		map[string]any{"name": "kind", "type": "text"},
		map[string]any{"name": "old", "type": "text"},
	}})
	srv.CreateRecord(t, "items", map[string]any{"id": "item00000000001", "label": "first", "kind": "a", "old": "x"})
	srv.CreateRecord(t, "items", map[string]any{"id": "item00000000002", "label": "second", "kind": "a", "old": "y"})

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.goTo("/_/collections/items")
	p.waitFor("the records page", `document.querySelector("#schema summary")`, 10*time.Second)
	p.mustJS(`document.querySelector("#schema summary").click() === undefined`)
	p.waitFor("the fields form", `document.querySelectorAll("#schema-fields tbody tr").length === 3`, 10*time.Second)
	p.checkNamed("schema")
	p.waitFor("the relation targets", `[...document.querySelectorAll("#schema datalist option")].some((o) => o.value === "items")`, 10*time.Second)

	// A refused change: a field whose name is taken.
	p.fill("input[name=new_field_name]", "kind")
	p.press("Add to list")
	p.press("Save fields")
	p.waitFor("the server's refusal", `[...document.querySelectorAll("#schema [role=alert]")].some((e) => e.textContent.startsWith("422"))`, 10*time.Second)
	p.mustJS(`document.querySelector("#schema-fields tbody tr:nth-child(4) input[name=schema_field_remove]").click() === undefined`)

	// Rename label to title, remove old, add note.
	p.fill("#schema-fields tbody tr:nth-child(1) input[name=schema_field_name]", "title")
	p.mustJS(`document.querySelector("#schema-fields tbody tr:nth-child(3) input[name=schema_field_remove]").click() === undefined`)
	p.fill("input[name=new_field_name]", "note")
	p.press("Add to list")
	p.waitFor("the data-loss warning", `document.querySelector("#schema").textContent.includes("drops the values of old")`, 10*time.Second)
	p.shot("dashboard-schema")
	p.press("Save fields")
	p.press("Confirm save")
	p.waitFor("the saved fields", `location.pathname === "/_/collections/items" && document.querySelector("#records") && document.querySelector("#records thead").textContent.includes("title")`, 10*time.Second)
	coll := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/items", nil)["data"])
	var names []string
	for _, f := range coll["fields"].([]any) {
		names = append(names, apitest.Obj(t, f)["name"].(string))
	}
	if got := strings.Join(names, ","); got != "title,kind,note" {
		t.Fatalf("fields after the edit = %s, want title,kind,note", got)
	}
	rec := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/items/item00000000001", nil)["data"])
	if rec["title"] != "first" {
		t.Fatalf("the renamed field lost its value: %v", rec)
	}

	// Indexes: a unique one over repeated values is refused, a plain one
	// is created and dropped.
	p.mustJS(`document.querySelector("#schema summary").click() === undefined`)
	p.waitFor("the indexes section", `document.querySelector("select[name=index_field]") && document.body.textContent.includes("No managed indexes.")`, 10*time.Second)
	p.choose("select[name=index_field]", "kind")
	p.mustJS(`document.querySelector("input[name=index_unique]").click() === undefined`)
	p.press("Create index")
	p.waitFor("the unique index refused", `[...document.querySelectorAll("#schema [role=alert]")].some((e) => e.textContent.startsWith("422"))`, 10*time.Second)
	p.mustJS(`document.querySelector("input[name=index_unique]").click() === undefined`)
	p.press("Create index")
	p.waitFor("the index listed", `document.querySelector("#indexes") && document.querySelector("#indexes").textContent.includes("idx_items_kind")`, 10*time.Second)
	p.checkNamed("schema with an index")
	idx := srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/items/indexes", nil)["data"].([]any)
	if len(idx) != 1 {
		t.Fatalf("indexes = %v", idx)
	}
	p.press("Drop idx_items_kind")
	p.press("Confirm drop")
	p.waitFor("no indexes", `!document.querySelector("#indexes") && document.body.textContent.includes("No managed indexes.")`, 10*time.Second)
	if idx := srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/items/indexes", nil)["data"].([]any); len(idx) != 0 {
		t.Fatalf("indexes after the drop = %v", idx)
	}

	// Delete, through the confirmation.
	p.press("Delete collection")
	p.press("Confirm delete items")
	p.waitFor("the collections list", `location.pathname === "/_/" && document.querySelector("h1").textContent === "Collections"`, 10*time.Second)
	if res, _ := srv.AdminDo(t, http.MethodGet, "/api/v1/admin/collections/items", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the deleted collection answers %d", res.StatusCode)
	}

	// A viewer sees none of it.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	srv.CreateCollection(t, map[string]any{"name": "things", "fields": []any{map[string]any{"name": "label", "type": "text"}}})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	p.goTo("/_/collections/things")
	p.waitFor("the records page", `document.querySelector("input[name=filter]")`, 10*time.Second)
	if p.text(`!!document.querySelector("#schema")`) != "false" {
		t.Error("a viewer sees the schema tools")
	}
}
