package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardBrowser walks the dashboard of a fresh node in headless
// Chromium as its first admin would: create the first admin, create a
// collection with a bad rule and see the server's error under it, fix it,
// add records, filter and sort them, edit one, restore an older version
// from its history, mint and revoke an API token; then sign in as a viewer
// and find no write control. Every page's controls are checked against
// the browser's accessibility tree.
func TestDashboardBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	p := openDashboard(t, srv.URL)

	// First run: the node has no admin, the page offers to create one.
	p.waitFor("the setup form", `document.querySelector("h1") && document.querySelector("h1").textContent === "Create the first admin"`, 15*time.Second)
	p.checkNamed("setup")
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	if role := p.text(`document.getElementById("role").textContent`); role != "owner" {
		t.Fatalf("role shown = %q, want owner", role)
	}
	// The token is in sessionStorage, not a cookie the page relies on.
	p.mustJS(`JSON.parse(sessionStorage.getItem("svcd.dashboard.session")).token.length > 20`)

	// A collection with a rule the server's parser refuses.
	p.waitFor("the collections page", `document.querySelector("h1").textContent === "Collections"`, 10*time.Second)
	p.press("New collection")
	p.waitFor("the new collection form", `document.querySelector("input[name=name]")`, 10*time.Second)
	p.fill("input[name=name]", "posts")
	p.mustJS(`document.querySelector("input[name=history_enabled]").click() === undefined`)
	p.fill(".fields > fieldset:nth-child(1) input[name=field_name]", "title")
	p.press("Add field")
	p.fill(".fields > fieldset:nth-child(2) input[name=field_name]", "views")
	p.choose(".fields > fieldset:nth-child(2) select[name=field_type]", "number")
	p.choose("select[name=view_rule_mode]", "expr")
	p.fill("input[name=view_rule]", `titel = "x"`)
	p.press("Create collection")
	ruleErr := `document.getElementById(document.querySelector("input[name=view_rule]").getAttribute("aria-describedby")).textContent`
	p.waitFor("the rule's error", ruleErr+`.includes("titel")`, 10*time.Second)
	if msg := p.text(ruleErr); !strings.Contains(msg, "offset 0") {
		t.Errorf("rule error = %q, want the offset", msg)
	}
	p.mustJS(`document.querySelector("input[name=view_rule]").getAttribute("aria-invalid") === "true"`)
	p.checkNamed("new collection")
	p.shot("dashboard-collection-rule-error")
	if res, _ := srv.AdminDo(t, http.MethodGet, "/api/v1/admin/collections/posts", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the refused collection exists: %d", res.StatusCode)
	}
	// Fixed, it saves and the page moves to its records.
	p.fill("input[name=view_rule]", `title != ""`)
	p.press("Create collection")
	p.waitFor("the records page", `location.pathname === "/_/collections/posts" && document.querySelector("#records")`, 10*time.Second)
	coll := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/posts", nil)["data"])
	if coll["view_rule"] != `title != ""` || coll["create_rule"] != nil || coll["history_enabled"] != true {
		t.Fatalf("collection saved = %v", coll)
	}

	// A record through the editor, more through the API.
	p.press("New record")
	p.waitFor("the record editor", `document.querySelector("[name=rec_title]")`, 10*time.Second)
	p.fill("[name=rec_title]", "first")
	p.fill("[name=rec_views]", "7")
	p.press("Create record")
	p.waitFor("the created record", `/\/records\/[a-z0-9]{15}$/.test(location.pathname)`, 10*time.Second)
	firstID := p.text(`location.pathname.split("/").pop()`)
	for i, title := range []string{"second", "third", "fourth"} {
		srv.CreateRecord(t, "posts", map[string]any{"title": title, "views": i + 1})
	}

	// Filter in the filter language, a bad filter's error, sort by column.
	p.goTo("/_/collections/posts")
	p.waitFor("four records", `document.querySelectorAll("#records tbody tr").length === 4`, 10*time.Second)
	p.fill("input[name=filter]", "views > 2")
	p.press("Apply filter")
	p.waitFor("the filtered table", `document.querySelectorAll("#records tbody tr").length === 2`, 10*time.Second)
	p.fill("input[name=filter]", `titel = "x"`)
	p.press("Apply filter")
	p.waitFor("the filter's error", `document.getElementById("filter-error").textContent.includes("titel")`, 10*time.Second)
	p.fill("input[name=filter]", "")
	p.press("Apply filter")
	p.waitFor("the whole table", `document.querySelectorAll("#records tbody tr").length === 4 && !document.getElementById("filter-error").textContent`, 10*time.Second)
	p.press("views")
	p.waitFor("the table sorted by views", `document.querySelector("th[aria-sort=ascending]")`, 10*time.Second)
	views := `[...document.querySelectorAll("#records tbody tr")].map((r) => r.children[[...document.querySelectorAll("#records th")].findIndex((h) => h.textContent.startsWith("views"))].textContent).join(",")`
	p.waitFor("ascending views", views+` === "1,2,3,7"`, 10*time.Second)
	p.press("views ▲")
	p.waitFor("descending views", views+` === "7,3,2,1"`, 10*time.Second)
	p.checkNamed("records")
	p.shot("dashboard-records")

	// The rules of the existing collection: a refused edit, then a fix.
	p.mustJS(`document.querySelector("details summary").click() === undefined`)
	p.waitFor("the rules form", `document.querySelector("details[open] form input[name=view_rule]")`, 10*time.Second)
	p.checkNamed("rules")
	p.fill("details input[name=view_rule]", `title != "" && views >`)
	p.press("Save rules")
	editErr := `document.getElementById(document.querySelector("details input[name=view_rule]").getAttribute("aria-describedby")).textContent`
	p.waitFor("the edited rule's error", editErr+`.includes("offset")`, 10*time.Second)
	if coll := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/posts", nil)["data"]); coll["view_rule"] != `title != ""` {
		t.Fatalf("a refused rule edit changed the collection: %v", coll["view_rule"])
	}
	p.fill("details input[name=view_rule]", `title != "" && views >= 0`)
	p.press("Save rules")
	p.waitFor("the saved rules", `document.querySelector("details").textContent.includes("Rules saved.") && !(`+editErr+`)`, 10*time.Second)
	if coll := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/posts", nil)["data"]); coll["view_rule"] != `title != "" && views >= 0` {
		t.Fatalf("rule after the edit = %v", coll["view_rule"])
	}

	// Edit the first record, then restore its first version.
	time.Sleep(1100 * time.Millisecond) // history is kept by the second
	p.press(firstID)
	p.waitFor("the record page", `document.querySelector("[name=rec_title]") && document.querySelector("#history")`, 10*time.Second)
	p.fill("[name=rec_title]", "first, edited")
	p.press("Save record")
	p.waitFor("two versions", `document.querySelectorAll("#history tbody tr").length === 2`, 10*time.Second)
	rec := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/posts/"+firstID, nil)["data"])
	if rec["title"] != "first, edited" {
		t.Fatalf("edited record = %v", rec)
	}
	p.checkNamed("record")
	p.shot("dashboard-record-history")
	p.mustJS(`[...document.querySelectorAll("#history tbody tr")].find((r) => r.children[1].textContent === "create").querySelector("button").click() === undefined`)
	p.press("Confirm restore")
	p.waitFor("the restored title", `document.querySelector("[name=rec_title]") && document.querySelector("[name=rec_title]").value === "first"`, 10*time.Second)
	if rec := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/posts/"+firstID, nil)["data"]); rec["title"] != "first" {
		t.Fatalf("restored record = %v", rec)
	}

	// API tokens: minted (shown once), listed, revoked.
	p.goTo("/_/tokens")
	p.waitFor("the tokens page", `document.querySelector("input[name=token_name]")`, 10*time.Second)
	p.fill("input[name=token_name]", "ci")
	p.press("Mint token")
	p.waitFor("the minted token", `document.getElementById("minted-token") && document.getElementById("minted-token").value.startsWith("svcat_")`, 10*time.Second)
	minted := p.text(`document.getElementById("minted-token").value`)
	if res, _ := srv.Do(t, http.MethodGet, "/api/v1/posts", nil, map[string]string{"Authorization": "Bearer " + minted}); res.StatusCode != http.StatusOK {
		t.Fatalf("the minted token is refused: %d", res.StatusCode)
	}
	p.checkNamed("tokens")
	p.press("Done")
	p.waitFor("the token's row", `document.querySelector("#tokens") && document.querySelector("#tokens").textContent.includes("ci")`, 10*time.Second)
	if p.text(`document.body.innerText`) == "" || strings.Contains(p.text(`document.body.innerText`), minted) {
		t.Fatalf("the token secret is shown again after Done")
	}
	p.press("Revoke ci")
	p.press("Confirm revoke")
	p.waitFor("no tokens", `!document.querySelector("#tokens")`, 10*time.Second)
	if res, _ := srv.Do(t, http.MethodGet, "/api/v1/posts", nil, map[string]string{"Authorization": "Bearer " + minted}); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the revoked token still works: %d", res.StatusCode)
	}

	// A viewer sees no write control (and the server refuses anyway).
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	if role := p.text(`document.getElementById("role").textContent`); role != "viewer" {
		t.Fatalf("role shown = %q, want viewer", role)
	}
	p.waitFor("the collections list", `document.querySelector("table") && document.querySelector("table").textContent.includes("posts")`, 10*time.Second)
	if p.hasControl("New collection") {
		t.Error("a viewer sees New collection")
	}
	p.goTo("/_/collections/posts/records/" + firstID)
	p.waitFor("the record page", `document.querySelector("[name=rec_title]")`, 10*time.Second)
	p.mustJS(`document.querySelector("[name=rec_title]").disabled`)
	for _, label := range []string{"Save record", "Confirm restore"} {
		if p.hasControl(label) {
			t.Errorf("a viewer sees %s", label)
		}
	}
	if p.text(`[...document.querySelectorAll("#history button")].length`) != "0" {
		t.Error("a viewer sees restore buttons")
	}
	p.goTo("/_/collections/posts")
	p.waitFor("the records page", `document.querySelector("#records")`, 10*time.Second)
	if p.hasControl("New record") {
		t.Error("a viewer sees New record")
	}
	p.goTo("/_/tokens")
	p.waitFor("the tokens page", `document.querySelector("h1").textContent === "API tokens"`, 10*time.Second)
	if p.hasControl("Mint token") {
		t.Error("a viewer sees Mint token")
	}
	v, err := p.js(`fetch("/api/v1/admin/collections", {method: "POST", credentials: "omit", headers: {"Authorization": "Bearer " +
		JSON.parse(sessionStorage.getItem("svcd.dashboard.session")).token}, body: JSON.stringify({name: "x", fields: []})}).then((r) => r.status)`)
	if err != nil || v != float64(http.StatusForbidden) {
		t.Errorf("a viewer's collection create = %v, %v; want 403", v, err)
	}
}
