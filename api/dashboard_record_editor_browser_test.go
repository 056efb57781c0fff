package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardRecordEditorBrowser uses the record editor's relation
// picker and date input in headless Chromium: the picker lists the
// related collection's records by id and title; the chosen one and the
// date (entered in local time) are what the server stores, and the editor
// shows them back after a reload.
func TestDashboardRecordEditorBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t) // creates the first admin
	srv.CreateCollection(t, map[string]any{"name": "authors", "fields": []any{map[string]any{"name": "name", "type": "text"}}})
	srv.CreateRecord(t, "authors", map[string]any{"id": "author000000001", "name": "Ada"})
	srv.CreateRecord(t, "authors", map[string]any{"id": "author000000002", "name": "Grace"})
	srv.CreateCollection(t, map[string]any{"name": "posts", "fields": []any{
		map[string]any{"name": "title", "type": "text"},
		map[string]any{"name": "author", "type": "relation", "collection": "authors"},
		map[string]any{"name": "published", "type": "date"},
	}})

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.goTo("/_/collections/posts/records/new")
	p.waitFor("the relation picker", `document.querySelector("select[name=rec_author]") && document.querySelector("select[name=rec_author]").dataset.loaded === "true"`, 10*time.Second)
	p.mustJS(`[...document.querySelector("select[name=rec_author]").options].some((o) => o.textContent === "author000000002 · Grace")`)
	p.mustJS(`document.querySelector("input[name=rec_published]").type === "datetime-local"`)
	p.checkNamed("record editor")
	p.fill("[name=rec_title]", "hello")
	p.choose("select[name=rec_author]", "author000000002")
	p.mustJS(`(() => { const e = document.querySelector("input[name=rec_published]"); e.value = "2026-03-01T12:30:00"; return e.value !== ""; })()`)
	want := p.text(`Math.floor(new Date("2026-03-01T12:30:00").getTime() / 1000)`)
	p.press("Create record")
	p.waitFor("the created record", `location.pathname.startsWith("/_/collections/posts/records/") && !location.pathname.endsWith("/new") && document.querySelector("select[name=rec_author]")`, 10*time.Second)
	id := p.text(`location.pathname.split("/").pop()`)
	rec := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/posts/"+id, nil)["data"])
	if rec["author"] != "author000000002" {
		t.Fatalf("author = %v, want author000000002", rec["author"])
	}
	if got := string(rec["published"].(json.Number)); got != want {
		t.Fatalf("published = %s, want %s (2026-03-01T12:30:00 in the browser's zone)", got, want)
	}
	// Shown back as chosen.
	p.waitFor("the stored values in the editor", `document.querySelector("select[name=rec_author]").value === "author000000002" && document.querySelector("input[name=rec_published]").value.startsWith("2026-03-01T12:30")`, 10*time.Second)
	if strings.TrimSpace(want) == "" {
		t.Fatal("no expected time")
	}
}
