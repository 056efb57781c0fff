package api_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"svcd/api/apitest"
)

// TestFilesRequired: a required file field refuses, with the validation
// error of any blank required field (422, details.<field> "cannot be
// blank"), every write that would leave it without files, whatever the
// entry point: a JSON create, a multipart create without the file (its
// other uploads are not kept), a batch, a CSV import, a JSON update to
// null, deleting the last file (one or all), and a multipart update that
// clears it or removes its last file. Writes that leave files in it pass.
func TestFilesRequired(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("reports", "base", []map[string]any{
		f("title", "text"), f("scan", "file", "required", true), f("pages", "file", "multiple", true, "required", true),
		f("note", "file"),
	})))
	admin := s.AdminHeaders(t, nil)
	img := pngBytes(t, 4, 4)
	stored := func() int {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join(s.DataDir, "storage"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return len(entries)
	}
	// form is a multipart scenario body and its Content-Type header.
	form := func(parts ...formPart) (string, map[string]string) {
		body, ct := multipartBody(t, parts...)
		return string(body), map[string]string{"Content-Type": ct}
	}

	res, out := sendForm(t, s, http.MethodPost, "/api/v1/reports", admin,
		value("title", "full"), file("scan", "scan.png", img), file("pages", "p1.txt", []byte("page one")), file("pages", "p2.txt", []byte("page two")))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("multipart create with every required file: %d %s", res.StatusCode, out)
	}
	rec := apitest.Obj(t, apitest.DecodeMap(t, out)["data"])
	id := rec["id"].(string)
	scan := rec["scan"].(string)
	pages := apitest.List(t, rec["pages"])
	if len(pages) != 2 {
		t.Fatalf("pages %v", pages)
	}
	page1, page2 := pages[0].(string), pages[1].(string)
	before := stored()

	blank := func(fields ...string) []string {
		var out []string
		for _, f := range fields {
			out = append(out, `"`+f+`":"cannot be blank"`)
		}
		return out
	}
	noFiles, noFilesCT := form(value("title", "no files"))
	scanOnly, scanOnlyCT := form(value("title", "scan only"), file("scan", "scan.png", img))
	both, bothCT := form(value("title", "both"), file("scan", "scan.png", img), file("pages", "p.txt", []byte("a page")))
	clearScan, clearScanCT := form(value("scan", ""))
	dropPages, dropPagesCT := form(value("pages-", page2))
	newScan, newScanCT := form(file("scan", "again.png", img))
	recURL := "/api/v1/reports/" + id
	filesURL := "/api/v1/files/reports/" + id
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "JSON create without the files", Method: "POST", URL: "/api/v1/reports", Admin: true, Body: map[string]any{"title": "x"},
			ExpectedStatus: 422, ExpectedContent: blank("scan", "pages"), NotExpectedContent: []string{`"note"`}},
		{Name: "multipart create without file parts", Method: "POST", URL: "/api/v1/reports", Admin: true, Body: noFiles, Headers: noFilesCT,
			ExpectedStatus: 422, ExpectedContent: blank("scan", "pages")},
		{Name: "multipart create missing one required field keeps none of its uploads", Method: "POST", URL: "/api/v1/reports", Admin: true,
			Body: scanOnly, Headers: scanOnlyCT, ExpectedStatus: 422, ExpectedContent: blank("pages"), NotExpectedContent: []string{`"scan"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if n := stored(); n != before {
					t.Errorf("the refused create left blobs: %d stored, %d before", n, before)
				}
			}},
		{Name: "multipart create with every required file", Method: "POST", URL: "/api/v1/reports", Admin: true, Body: both, Headers: bothCT,
			ExpectedStatus: 201, ExpectedContent: []string{`"title":"both"`}},
		{Name: "batch create without the files", Method: "POST", URL: batchURL, Admin: true,
			Body:           map[string]any{"requests": []map[string]any{entry("POST", "/api/v1/reports", map[string]any{"title": "in a batch"})}},
			ExpectedStatus: 422, ExpectedContent: blank("scan", "pages")},
		{Name: "CSV import of rows without files", Method: "POST", URL: "/api/v1/admin/import/reports", Admin: true,
			Headers: map[string]string{"Content-Type": "text/csv"}, Body: "title\nfirst\nsecond\n",
			ExpectedStatus: 200, ExpectedContent: append([]string{`"created":0`, `"failed":2`}, blank("scan", "pages")...)},
		{Name: "JSON update of another field", Method: "PATCH", URL: recURL, Admin: true, Body: map[string]any{"title": "renamed"},
			ExpectedStatus: 200, ExpectedContent: []string{`"scan":"` + scan + `"`}},
		{Name: "JSON update setting a required file field to null", Method: "PATCH", URL: recURL, Admin: true, Body: map[string]any{"scan": nil},
			ExpectedStatus: 422, ExpectedContent: blank("scan")},
		{Name: "JSON update setting an optional file field to null", Method: "PATCH", URL: recURL, Admin: true, Body: map[string]any{"note": nil},
			ExpectedStatus: 200},
		{Name: "deleting the only file of a required field", Method: "DELETE", URL: filesURL + "/scan/" + scan, Admin: true,
			ExpectedStatus: 422, ExpectedContent: blank("scan")},
		{Name: "deleting every file of a required field", Method: "DELETE", URL: filesURL + "/pages", Admin: true,
			ExpectedStatus: 422, ExpectedContent: blank("pages")},
		{Name: "deleting one of two files of a required field", Method: "DELETE", URL: filesURL + "/pages/" + page1, Admin: true,
			ExpectedStatus: 204},
		{Name: "deleting the last file of a required field", Method: "DELETE", URL: filesURL + "/pages/" + page2, Admin: true,
			ExpectedStatus: 422, ExpectedContent: blank("pages")},
		{Name: "multipart update clearing a required field", Method: "PATCH", URL: recURL, Admin: true, Body: clearScan, Headers: clearScanCT,
			ExpectedStatus: 422, ExpectedContent: blank("scan")},
		{Name: "multipart update removing the last file of a required field", Method: "PATCH", URL: recURL, Admin: true,
			Body: dropPages, Headers: dropPagesCT, ExpectedStatus: 422, ExpectedContent: blank("pages")},
		{Name: "multipart update replacing a required field's file", Method: "PATCH", URL: recURL, Admin: true, Body: newScan, Headers: newScanCT,
			ExpectedStatus: 200, NotExpectedContent: []string{scan}},
		{Name: "deleting every file of an optional field", Method: "DELETE", URL: filesURL + "/note", Admin: true,
			ExpectedStatus: 200, ExpectedContent: []string{`"deleted":0`}},
	})

	// The refusals changed nothing: the record holds its new scan and the
	// page left, and both download.
	got, _ := getRecord(t, s, "reports", id)
	if got["scan"] == scan || got["scan"] == nil {
		t.Errorf("scan after the replacement: %v (was %s)", got["scan"], scan)
	}
	if p := apitest.List(t, got["pages"]); len(p) != 1 || p[0] != page2 {
		t.Errorf("pages after the refusals: %v, want [%s]", p, page2)
	}
	for _, name := range []string{got["scan"].(string), page2} {
		if st, _, _ := download(t, s, fileURL(name), admin); st != http.StatusOK {
			t.Errorf("download %s: %d", name, st)
		}
	}
	if n := countRecords(t, s, "reports"); n != 2 {
		t.Errorf("%d reports, want 2 (the refused creates made none)", n)
	}
}
