package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// TestAdminFiles: the admin's read of stored files counts what uploads
// stored, per collection and field, pages a collection's files newest
// first and sorts them; a delete shows in both; an editor reads them, a
// viewer is refused.
func TestAdminFiles(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	owner := s.AdminToken(t)
	s.CreateCollection(t, map[string]any{"name": "papers", "fields": []any{
		map[string]any{"name": "title", "type": "text"},
		map[string]any{"name": "scans", "type": "file", "multiple": true},
		map[string]any{"name": "cover", "type": "file", "protected": true},
	}})
	a := s.CreateRecord(t, "papers", map[string]any{"title": "a"})["id"].(string)
	b := s.CreateRecord(t, "papers", map[string]any{"title": "b"})["id"].(string)
	h := s.AdminHeaders(t, nil)
	scans := apitest.List(t, uploadOK(t, s, "papers", a, "scans", h, file("file", "one.txt", []byte("12345")), file("file", "two.txt", []byte("1234567890"))))
	cover := apitest.Obj(t, uploadOK(t, s, "papers", b, "cover", h, file("file", "c.txt", []byte("abc"))))

	st := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/admin/files", nil)["data"])
	if d := apitest.Obj(t, st["storage"])["driver"]; d != "local" {
		t.Errorf("driver = %v", d)
	}
	if apitest.Int(t, st["files"]) != 3 || apitest.Int(t, st["bytes"]) != 18 || apitest.Int(t, st["records"]) != 2 {
		t.Errorf("totals = %v", st)
	}
	fields := apitest.List(t, st["fields"])
	if len(fields) != 2 {
		t.Fatalf("fields = %v", fields)
	}
	want := []string{"papers cover 1 1 3", "papers scans 1 2 15"}
	for i, f := range fields {
		m := apitest.Obj(t, f)
		if got := fmt.Sprintf("%v %v %d %d %d", m["collection"], m["field"], apitest.Int(t, m["records"]), apitest.Int(t, m["files"]), apitest.Int(t, m["bytes"])); got != want[i] {
			t.Errorf("field %d = %s, want %s", i, got, want[i])
		}
	}

	list := s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/admin/files/papers?perPage=2", nil)
	if apitest.Int(t, list["totalItems"]) != 3 || apitest.Int(t, list["totalPages"]) != 2 || apitest.Int(t, list["page"]) != 1 {
		t.Errorf("page = %v", list)
	}
	first := apitest.Obj(t, apitest.List(t, list["data"])[0])
	if first["filename"] != cover["filename"] || first["recordId"] != b || first["field"] != "cover" || first["protected"] != true ||
		first["originalName"] != "c.txt" || apitest.Int(t, first["size"]) != 3 {
		t.Errorf("newest first: %v, want %v", first, cover)
	}
	bySize := apitest.List(t, s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/admin/files/papers?sort=-size", nil)["data"])
	if len(bySize) != 3 || apitest.Obj(t, bySize[0])["filename"] != apitest.Obj(t, scans[1])["filename"] {
		t.Errorf("sort=-size: %v", bySize)
	}
	res, body := s.AdminDo(t, "GET", "/api/v1/admin/files/papers?sort=owner", nil)
	if res.StatusCode != http.StatusBadRequest || apitest.Obj(t, apitest.DecodeMap(t, body)["details"])["sort"] == nil {
		t.Errorf("a bad sort: %d %s", res.StatusCode, body)
	}
	if res, body := s.AdminDo(t, "GET", "/api/v1/admin/files/nothing", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown collection: %d %s", res.StatusCode, body)
	}

	name := apitest.Obj(t, scans[0])["filename"].(string)
	if res, body := s.AdminDo(t, "DELETE", "/api/v1/files/papers/"+a+"/scans/"+name, nil); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.StatusCode, body)
	}
	st = apitest.Obj(t, s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/admin/files", nil)["data"])
	if apitest.Int(t, st["files"]) != 2 || apitest.Int(t, st["bytes"]) != 13 {
		t.Errorf("after the delete: %v", st)
	}

	res, body = s.Do(t, "POST", "/api/v1/admin/admins", map[string]any{"email": "editor@example.com", "password": adminPassword, "role": "editor"}, bearer(owner))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create editor: %d %s", res.StatusCode, body)
	}
	res, body = s.Do(t, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "editor@example.com", "password": adminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("editor login: %d %s", res.StatusCode, body)
	}
	editor := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
	for _, p := range []string{"/api/v1/admin/files", "/api/v1/admin/files/papers"} {
		if res, body := s.Do(t, "GET", p, nil, bearer(editor)); res.StatusCode != http.StatusOK {
			t.Errorf("an editor reads %s: %d %s", p, res.StatusCode, body)
		}
	}
	viewer := viewerToken(t, s, owner)
	for _, p := range []string{"/api/v1/admin/files", "/api/v1/admin/files/papers"} {
		if res, body := s.Do(t, "GET", p, nil, bearer(viewer)); res.StatusCode != http.StatusForbidden {
			t.Errorf("a viewer reads %s: %d %s", p, res.StatusCode, body)
		}
	}
}
