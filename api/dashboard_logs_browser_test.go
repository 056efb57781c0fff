package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardLogsBrowser browses the log and the audit log in headless
// Chromium against a real node: a request found by its id, the level
// filter, paging through more lines than a page holds, every node's lines
// (node=all names the members that answered); the audit log's entries of
// admin writes, filtered by action prefix, and a bad window refused by the
// server with its message shown.
func TestDashboardLogsBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t)
	res, _ := srv.Do(t, http.MethodGet, "/api/v1/nothing-here/abc", nil, map[string]string{"X-Request-Id": "dash/logs/404"})
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("the 404 request answered %d", res.StatusCode)
	}
	for i := 0; i < 35; i++ {
		srv.Do(t, http.MethodGet, "/_/health", nil, map[string]string{"X-Request-Id": fmt.Sprintf("dash/page/%02d", i)})
	}
	srv.CreateCollection(t, map[string]any{"name": "notes", "fields": []map[string]any{{"name": "title", "type": "text"}}})
	srv.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"my.key": "x"})

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("Logs")
	p.waitFor("the log", `document.querySelector("#logs")`, 10*time.Second)
	p.checkNamed("logs")
	rows := `document.querySelectorAll("#logs tbody tr")`
	p.fill("input[name=log_q]", "dash/logs/404")
	p.press("Show lines")
	p.waitFor("the 404 line alone", rows+`.length === 1 && document.querySelector("#logs tbody").textContent.includes("→ 404")`, 10*time.Second)

	// A day the server refuses: its message, the field marked.
	p.fill("input[name=log_date]", "2026-02-30")
	p.press("Show lines")
	p.waitFor("the refusal", `document.querySelector("p.error[role=alert]").textContent.startsWith("400") &&
		document.querySelector("input[name=log_date]").getAttribute("aria-invalid") === "true" && !document.querySelector("#logs")`, 10*time.Second)
	p.fill("input[name=log_date]", "")

	// Paging: 35 matching lines, 30 a page.
	p.fill("input[name=log_q]", "dash/page/")
	p.press("Show lines")
	p.waitFor("the first page", rows+`.length === 30 && document.body.textContent.includes("Page 1 of 2 · 35 lines")`, 10*time.Second)
	p.press("Next page")
	p.waitFor("the second page", rows+`.length === 5 && document.body.textContent.includes("Page 2 of 2")`, 10*time.Second)
	if txt := p.text(`document.querySelector("#logs tbody").textContent`); !strings.Contains(txt, "dash/page/00") || strings.Contains(txt, "dash/page/34") {
		t.Errorf("the second page (oldest lines) shows %q", txt)
	}

	// Level: warn and above leaves the 404 and drops the health probes.
	p.fill("input[name=log_q]", "dash/")
	p.choose("select[name=log_level]", "warn")
	p.press("Show lines")
	p.waitFor("warn lines only", rows+`.length === 1 && document.querySelector("#logs tbody").textContent.includes("dash/logs/404")`, 10*time.Second)

	// JSONPath instead of the filters; a query that does not parse.
	p.choose("select[name=log_level]", "")
	p.fill("input[name=log_jsonpath]", `$[?@.status == 404 && @.request_id == "dash/logs/404"]`)
	p.press("Show lines")
	p.waitFor("the 404 by JSONPath", rows+`.length === 1 && document.querySelector("#logs tbody").textContent.includes("dash/logs/404")`, 10*time.Second)
	p.fill("input[name=log_jsonpath]", `$[?@.status >= 500`)
	p.press("Show lines")
	p.waitFor("the parser's message", `document.querySelector("p.error[role=alert]").textContent.startsWith("422") &&
		document.querySelector("input[name=log_jsonpath]").getAttribute("aria-invalid") === "true"`, 10*time.Second)
	p.fill("input[name=log_jsonpath]", "")
	p.choose("select[name=log_level]", "warn")

	// Every node: this one answers and is named.
	p.mustJS(`document.querySelector("input[name=log_all_nodes]").click() === undefined`)
	p.press("Show lines")
	p.waitFor("the nodes line", `document.getElementById("log-nodes").textContent.startsWith("Nodes: ")`, 10*time.Second)
	p.shot("dashboard-logs")

	// The audit log: the admin writes, newest first, filtered by action.
	p.press("Audit log")
	p.waitFor("the audit log", `document.querySelectorAll("#audit tbody tr").length >= 2`, 10*time.Second)
	p.checkNamed("audit")
	// Newest first: the settings change comes before the collection's
	// create (the log searches above, POSTs, are recorded too).
	actions := p.text(`[...document.querySelectorAll("#audit tbody tr")].map((r) => r.children[2].textContent).join(" ")`)
	if s, c := strings.Index(actions, "settings."), strings.Index(actions, "collections."); s < 0 || c < 0 || s > c {
		t.Errorf("audit actions, newest first: %s", actions)
	}
	p.fill("input[name=audit_action]", "collections.")
	p.press("Show entries")
	p.waitFor("collection entries only", `document.querySelectorAll("#audit tbody tr").length >= 1 &&
		[...document.querySelectorAll("#audit tbody tr")].every((r) => r.children[2].textContent.startsWith("collections."))`, 10*time.Second)
	p.shot("dashboard-audit")

	// A window that ends before it starts: the server's 400, the fields marked.
	p.fill("input[name=audit_from]", "2026-05-02 10:00")
	p.fill("input[name=audit_to]", "2026-05-01 10:00")
	p.press("Show entries")
	p.waitFor("the refusal", `document.querySelector("p.error[role=alert]").textContent.startsWith("400")`, 10*time.Second)
	p.mustJS(`document.querySelector("input[name=audit_to]").getAttribute("aria-invalid") === "true" && !document.querySelector("#audit")`)
}
