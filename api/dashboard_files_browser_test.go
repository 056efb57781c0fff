package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardFilesBrowser: two files uploaded through the API show on
// the Files page in headless Chromium with their sizes, per field and
// per file, and the image with its thumbnail; Open gives a link through
// a file token that downloads the protected file; Delete, confirmed,
// removes one, and the API agrees. A viewer has no Files link, and the
// page shows the server's refusal and no Delete.
func TestDashboardFilesBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t)
	srv.CreateCollection(t, map[string]any{"name": "albums", "fields": []any{
		map[string]any{"name": "title", "type": "text"},
		map[string]any{"name": "cover", "type": "file", "mimeTypes": []any{"image/png"}},
		map[string]any{"name": "notes", "type": "file", "protected": true},
	}})
	id := srv.CreateRecord(t, "albums", map[string]any{"title": "first"})["id"].(string)
	h := srv.AdminHeaders(t, nil)
	png := pngBytes(t, 64, 48)
	cover := apitest.Obj(t, uploadOK(t, srv, "albums", id, "cover", h, file("file", "pixel.png", png)))["filename"].(string)
	const text = "the notes of the first album"
	notes := apitest.Obj(t, uploadOK(t, srv, "albums", id, "notes", h, file("file", "notes.txt", []byte(text))))["filename"].(string)

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("Files")
	row := func(name string) string {
		return fmt.Sprintf(`document.querySelector('#files tr[data-file=%q]')`, name)
	}
	p.waitFor("both files", row(cover)+" && "+row(notes), 10*time.Second)
	for name, n := range map[string]int{cover: len(png), notes: len(text)} {
		if got := p.text(row(name) + `.querySelector("[data-bytes]").dataset.bytes`); got != strconv.Itoa(n) {
			t.Errorf("%s: the page shows %s bytes, want %d", name, got, n)
		}
	}
	if got := p.text(`document.querySelector("#file-fields tr[data-field='albums/notes'] [data-bytes]").dataset.bytes`); got != strconv.Itoa(len(text)) {
		t.Errorf("albums/notes: the page shows %s bytes, want %d", got, len(text))
	}
	p.waitFor("the cover's thumbnail", row(cover)+`.querySelector("img") && `+row(cover)+`.querySelector("img").complete && `+row(cover)+`.querySelector("img").naturalWidth > 0`, 10*time.Second)
	if p.text(row(notes)+`.querySelector("img")`) != "null" {
		t.Error("a text file has a thumbnail")
	}
	p.checkNamed("files")
	p.shot("dashboard-files")

	// Open: the link holds a file token; the protected file downloads
	// through it, with no other credentials.
	p.press("Open " + notes)
	p.waitFor("the link", `document.querySelector("#file-outcome a.file-link")`, 10*time.Second)
	got, err := p.js(`fetch(document.querySelector("#file-outcome a.file-link").href, {credentials: "omit"}).then(async (r) => r.status + " " + await r.text())`)
	if err != nil || got != "200 "+text {
		t.Errorf("the Open link answers %v (%v)", got, err)
	}

	p.press("Delete " + notes)
	p.press("Confirm delete")
	p.waitFor("the file gone", "!"+row(notes)+" && "+row(cover), 10*time.Second)
	if n := p.text(`document.querySelectorAll("#files tbody tr").length`); n != "1" {
		t.Errorf("after the delete the page lists %s files", n)
	}
	rec := srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/albums/"+id, nil)["data"].(map[string]any)
	if (rec["notes"] != nil && rec["notes"] != "") || rec["cover"] != cover {
		t.Errorf("the record after the delete: %v", rec)
	}
	list := srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/files/albums", nil)
	if apitest.Int(t, list["totalItems"]) != 1 {
		t.Errorf("the API lists %v", list)
	}

	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	p.waitFor("the collections list", `document.querySelector("h1") && document.querySelector("h1").textContent === "Collections"`, 10*time.Second)
	if p.hasControl("Files") {
		t.Error("a viewer sees the Files link")
	}
	p.goTo("/_/files")
	p.waitFor("the refusal", `document.querySelector("main [role=alert]") && document.querySelector("main [role=alert]").textContent.startsWith("403")`, 10*time.Second)
	if p.hasControl("Delete "+cover) || p.text(row(cover)) != "null" {
		t.Error("a viewer sees the files")
	}
}
