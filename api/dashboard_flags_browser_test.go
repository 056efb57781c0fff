package api_test

import (
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardFlagsBrowser manages feature flags in headless Chromium
// against a real node: a flag created on the page, a definition the server
// refuses with each problem listed by path, a fixed one saved, evaluated
// with its reason, switched on and off from the list (the public
// evaluation follows), and deleted; an editor has no Flags page.
func TestDashboardFlagsBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	public := func() any {
		t.Helper()
		res, body := srv.Do(t, http.MethodPost, "/api/v1/flags/evaluate", map[string]any{"context": map[string]any{"country": "FR"}}, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("public evaluate: %d %s", res.StatusCode, body)
		}
		return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["new-ui"]
	}

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("Flags")
	p.waitFor("the new flag form", `document.querySelector("input[name=flag_key]")`, 10*time.Second)
	p.checkNamed("flags (none)")
	p.fill("input[name=flag_key]", "new-ui")
	p.press("Create flag")
	p.waitFor("the flag's page", `location.pathname === "/_/flags/new-ui" && document.querySelector("textarea[name=flag_definition]")`, 10*time.Second)

	// A definition with two problems: both listed by path, nothing saved.
	p.mustJS(`(() => { const t = document.querySelector("textarea[name=flag_definition]"); const d = JSON.parse(t.value);
		d.default_value = "yes"; d.rules = [{when: {attr: "country", op: "older_than", value: 1}, variation: "on"}];
		t.value = JSON.stringify(d, null, 2); return true; })()`)
	p.press("Save flag")
	p.waitFor("the problems", `document.querySelectorAll("#flag-problems li").length === 2 &&
		document.getElementById("flag-problems").textContent.includes("rules.0.when.op") &&
		document.getElementById("flag-problems").textContent.includes("default_value")`, 10*time.Second)
	p.mustJS(`document.querySelector("textarea[name=flag_definition]").getAttribute("aria-invalid") === "true"`)
	if f := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/flags/new-ui", nil)["data"]); len(apitest.List(t, f["rules"])) != 0 {
		t.Fatalf("a refused definition was saved: %v", f)
	}
	p.checkNamed("flag (refused)")
	p.shot("dashboard-flag-error")

	// Fixed: saved, then evaluated with the reason.
	p.mustJS(`(() => { const t = document.querySelector("textarea[name=flag_definition]"); const d = JSON.parse(t.value);
		d.default_value = false; d.enabled = true; d.rules = [{id: "eu", when: {attr: "country", op: "in", value: ["FR", "DE"]}, variation: "on"}];
		t.value = JSON.stringify(d, null, 2); return true; })()`)
	p.press("Save flag")
	p.waitFor("the save", `document.querySelector("form [role=status]").textContent === "Saved." && !document.querySelector("#flag-problems li")`, 10*time.Second)
	if v := public(); v != true {
		t.Fatalf("public evaluation after the save = %v, want true", v)
	}
	p.fill("textarea[name=flag_context]", `{"country": "FR"}`)
	p.press("Evaluate flag")
	p.waitFor("the evaluation", `document.getElementById("flag-evaluation").textContent === "Value true · rule_match (rule eu, variation on)"`, 10*time.Second)

	// The list's switch turns it off and on.
	p.press("All flags")
	p.waitFor("the list", `document.querySelector("#flags tr[data-flag=new-ui]")`, 10*time.Second)
	p.mustJS(`document.querySelector("input[name='flag_enabled:new-ui']").checked`)
	p.mustJS(`document.querySelector("input[name='flag_enabled:new-ui']").click() === undefined`)
	p.waitFor("off", `document.querySelector("#flags tr[data-flag=new-ui]").textContent.includes("off")`, 10*time.Second)
	if v := public(); v != false {
		t.Fatalf("public evaluation of the switched-off flag = %v, want false", v)
	}
	p.checkNamed("flags")
	p.shot("dashboard-flags")

	// Delete.
	p.press("new-ui")
	p.press("Delete flag new-ui")
	p.press("Confirm delete")
	p.waitFor("no flags", `location.pathname === "/_/flags" && document.body.textContent.includes("No flags.")`, 10*time.Second)
	if res, _ := srv.AdminDo(t, http.MethodGet, "/api/v1/admin/flags/new-ui", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the deleted flag answers %d", res.StatusCode)
	}

	// An editor: no Flags link; the server refuses the page's call.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "editor@example.com", "password": apitest.AdminPassword, "role": "editor"})
	p.press("Sign out")
	p.signIn("editor@example.com", apitest.AdminPassword)
	if p.hasControl("Flags") {
		t.Error("an editor sees the Flags link")
	}
	p.goTo("/_/flags")
	p.waitFor("the refusal", `document.querySelector("p.error[role=alert]") && document.querySelector("p.error[role=alert]").textContent.startsWith("403")`, 10*time.Second)
	if p.hasControl("Create flag") {
		t.Error("an editor sees Create flag")
	}
}
