package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardRecordToolsBrowser uses the records page's tools in
// headless Chromium as an editor would: select two rows and delete them
// in one batch behind a confirmation; export the collection as CSV; import
// a CSV file with a bad row and see the server's count and the row's
// error. A viewer sees none of these controls.
func TestDashboardRecordToolsBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t) // creates the first admin
	srv.CreateCollection(t, map[string]any{"name": "posts", "view_rule": "", "fields": []any{
		map[string]any{"name": "title", "type": "text", "required": true},
		map[string]any{"name": "views", "type": "number"},
	}})
	for _, id := range []string{"post00000000001", "post00000000002", "post00000000003"} {
		srv.CreateRecord(t, "posts", map[string]any{"id": id, "title": "t " + id, "views": 1})
	}
	count := func() int {
		n, err := srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/posts?perPage=1", nil)["totalItems"].(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.goTo("/_/collections/posts")
	p.waitFor("three rows", `document.querySelectorAll("#records tbody tr").length === 3`, 10*time.Second)
	p.checkNamed("records with tools")

	// Batch delete of two selected rows.
	for _, id := range []string{"post00000000001", "post00000000003"} {
		p.mustJS(`document.querySelector("input[name=select_record][value=` + id + `]").click() === undefined`)
	}
	p.waitFor("two selected", `document.getElementById("bulk").textContent.includes("2 selected")`, 10*time.Second)
	p.press("Delete selected")
	p.press("Confirm delete 2 records")
	p.waitFor("one row left", `document.querySelectorAll("#records tbody tr").length === 1 && document.body.innerText.includes("2 records deleted.")`, 10*time.Second)
	if n := count(); n != 1 {
		t.Fatalf("records after the batch delete = %d, want 1", n)
	}
	if res, _ := srv.AdminDo(t, http.MethodGet, "/api/v1/posts/post00000000002", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the unselected record answers %d", res.StatusCode)
	}

	// Export: the page fetches the CSV with its token and offers it.
	p.press("Export CSV")
	p.waitFor("the export", `document.getElementById("csv-download") && document.getElementById("csv-download").download === "posts.csv"`, 10*time.Second)
	res, body := srv.AdminDo(t, http.MethodGet, "/api/v1/admin/export/posts", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export answers %d", res.StatusCode)
	}
	if got := p.text(`document.getElementById("csv-download").dataset.bytes`); got != strconv.Itoa(len(body)) {
		t.Fatalf("the page's export has %s bytes, the server's %d", got, len(body))
	}

	// Import: three rows, the second without its required title.
	csv := "title,views\nimported one,5\n,6\nimported three,7\n"
	p.mustJS(`(() => { const dt = new DataTransfer(); dt.items.add(new File([` + jsString(csv) + `], "more.csv", {type: "text/csv"}));
		const i = document.querySelector("input[name=csv_file]"); i.files = dt.files; return i.files.length === 1; })()`)
	// The progress bar's values, as the page sets them.
	p.mustJS(`(() => { window.csvProgress = []; const el = document.getElementById("csv-progress");
		new MutationObserver(() => window.csvProgress.push(el.hasAttribute("value") ? el.value : -1))
			.observe(el, {attributes: true, attributeFilter: ["value"]}); return true; })()`)
	p.press("Import CSV")
	p.waitFor("the import's answer", `document.getElementById("csv-status").textContent === "Imported 2 of 3 rows; 1 failed."`, 15*time.Second)
	// From 0, never backwards (indeterminate, -1, only once all is sent),
	// ending full.
	if ok := p.text(`(() => { const v = window.csvProgress.filter((x) => x >= 0); if (!v.length || v[0] !== 0 || v[v.length - 1] !== 1) return "no: " + window.csvProgress;
		for (let i = 1; i < v.length; i++) if (v[i] < v[i-1] || v[i] > 1) return "no: " + window.csvProgress; return "ok"; })()`); ok != "ok" {
		t.Errorf("the import's progress values: %s", ok)
	}
	p.waitFor("the failed row", `document.getElementById("csv-errors") && document.getElementById("csv-errors").querySelector("tbody td").textContent === "3"`, 10*time.Second)
	p.waitFor("the imported rows", `document.querySelectorAll("#records tbody tr").length === 3`, 10*time.Second)
	if n := count(); n != 3 {
		t.Fatalf("records after the import = %d, want 3", n)
	}
	p.checkNamed("records after an import")
	p.shot("dashboard-records-tools")

	// A viewer: no selection, no CSV tools.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	p.goTo("/_/collections/posts")
	p.waitFor("the records", `document.querySelectorAll("#records tbody tr").length === 3`, 10*time.Second)
	for _, label := range []string{"Export CSV", "Import CSV"} {
		if p.hasControl(label) {
			t.Errorf("a viewer sees %s", label)
		}
	}
	if v := p.text(`document.querySelectorAll("input[name=select_record]").length`); v != "0" {
		t.Errorf("a viewer sees %s selection boxes", v)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
