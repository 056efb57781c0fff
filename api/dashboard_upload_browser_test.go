package api_test

import (
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardUploadBrowser uploads files from the record editor in
// headless Chromium: a text file refused by an image-only field with the
// server's 422, then a PNG stored; two files appended to a multiple field.
// The record the server holds names the stored files the page shows.
func TestDashboardUploadBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t) // creates the first admin
	srv.CreateCollection(t, map[string]any{"name": "albums", "fields": []any{
		map[string]any{"name": "title", "type": "text"},
		map[string]any{"name": "cover", "type": "file", "mimeTypes": []any{"image/png"}},
		map[string]any{"name": "pages", "type": "file", "multiple": true},
	}})
	srv.CreateRecord(t, "albums", map[string]any{"id": "album0000000001", "title": "first"})

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.goTo("/_/collections/albums/records/album0000000001")
	p.waitFor("the upload controls", `document.querySelector("input[name=upload_cover]") && document.querySelector("input[name=upload_pages]")`, 10*time.Second)
	p.checkNamed("record with files")
	setFiles := func(input, files string) {
		p.mustJS(`(() => { const dt = new DataTransfer(); for (const f of ` + files + `) dt.items.add(f);
			const i = document.querySelector("input[name=` + input + `]"); i.files = dt.files; return i.files.length > 0; })()`)
	}
	cover := `document.querySelector(".upload[data-field=cover]")`

	setFiles("upload_cover", `[new File(["just text"], "notes.txt")]`)
	p.press("Upload to cover")
	p.waitFor("the refusal", cover+`.querySelector("[role=alert]").textContent.startsWith("422")`, 10*time.Second)
	setFiles("upload_cover", `[new File([Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0))], "pixel.png")]`)
	p.press("Upload to cover")
	p.waitFor("the stored cover", cover+`.querySelector("li") && `+cover+`.querySelector("li").textContent.endsWith(".png") && !`+cover+`.querySelector("[role=alert]").textContent`, 10*time.Second)
	setFiles("upload_pages", `[new File(["one"], "a.txt"), new File(["two"], "b.txt")]`)
	p.press("Upload to pages")
	p.waitFor("two pages", `document.querySelectorAll(".upload[data-field=pages] li").length === 2`, 10*time.Second)
	p.shot("dashboard-upload")

	rec := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/albums/album0000000001", nil)["data"])
	if rec["cover"] != p.text(cover+`.querySelector("li").textContent`) {
		t.Fatalf("cover = %v, the page shows %s", rec["cover"], p.text(cover+`.querySelector("li").textContent`))
	}
	if pages, _ := rec["pages"].([]any); len(pages) != 2 {
		t.Fatalf("pages = %v", rec["pages"])
	}
}
