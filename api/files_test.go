package api_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// storedName is SPEC.md's stored file name: <uuid>.<ext>.
var storedName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[a-z0-9]+$`)

// filesFixture is a node with users (ann, bob) and a collection papers that
// everyone may view, signed-in users may create in, and only a record's
// owner may update.
type filesFixture struct {
	s        *apitest.Server
	ann, bob map[string]string // bearer headers
	annID    string
	rec      string // a papers record owned by ann
}

func newFilesFixture(t *testing.T, s *apitest.Server) *filesFixture {
	t.Helper()
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("papers", "base", []map[string]any{
		f("title", "text"), f("owner", "relation", "collection", "users"), f("n", "number"),
		f("one", "file", "maxSize", 1000, "mimeTypes", []string{"image/png", "application/pdf"}),
		f("many", "file", "multiple", true),
	}, "view_rule", "", "create_rule", `@request.auth.id != ""`, "update_rule", "owner = @request.auth.id"))
	x := &filesFixture{s: s, ann: bearer(signUp(t, s, "ann@example.com")), bob: bearer(signUp(t, s, "bob@example.com"))}
	x.annID = listIDs(t, s, "/api/v1/users?filter="+urlq(`email = "ann@example.com"`))[0]
	x.rec = s.CreateRecord(t, "papers", map[string]any{"title": "t", "owner": x.annID})["id"].(string)
	return x
}

func urlq(s string) string {
	return strings.NewReplacer(" ", "%20", `"`, "%22", "=", "%3D", "@", "%40").Replace(s)
}

// record reads a papers record as the admin.
func (x *filesFixture) record(t *testing.T, id string) map[string]any {
	t.Helper()
	r, _ := getRecord(t, x.s, "papers", id)
	return r
}

func TestFilesUploadDownloadDelete(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	testFilesCore(t, s)
}

// testFilesCore is SPEC.md's Files section against s, whatever its
// storage driver.
func testFilesCore(t *testing.T, s *apitest.Server) {
	x := newFilesFixture(t, s)
	img := pngBytes(t, 8, 8)
	up := "/api/v1/files/papers/" + x.rec

	t.Run("uploads need authentication and the update rule", func(t *testing.T) {
		res, out := sendForm(t, s, "POST", up+"/one", nil, file("file", "a.png", img))
		if res.StatusCode != 401 {
			t.Fatalf("anonymous upload: %d %s", res.StatusCode, out)
		}
		res, out = sendForm(t, s, "POST", up+"/one", x.bob, file("file", "a.png", img))
		if res.StatusCode != 403 {
			t.Fatalf("bob's upload to ann's record: %d %s", res.StatusCode, out)
		}
		for path, want := range map[string]int{
			"/api/v1/files/papers/nosuchrecord123/one": 404, up + "/nosuch": 404, up + "/title": 404, "/api/v1/files/nosuch/" + x.rec + "/one": 404,
		} {
			if res, out := sendForm(t, s, "POST", path, x.ann, file("file", "a.png", img)); res.StatusCode != want {
				t.Errorf("upload to %s: %d %s, want %d", path, res.StatusCode, out, want)
			}
		}
		if res, out := s.Do(t, "POST", up+"/one", map[string]any{"file": "x"}, x.ann); res.StatusCode != 400 {
			t.Errorf("a JSON upload: %d %s", res.StatusCode, out)
		}
		if res, out := sendForm(t, s, "POST", up+"/one", x.ann, value("title", "no file")); res.StatusCode != 400 {
			t.Errorf("an upload without a file part: %d %s", res.StatusCode, out)
		}
	})

	var name string
	t.Run("upload answers the file object and sets the field", func(t *testing.T) {
		obj := apitest.Obj(t, uploadOK(t, s, "papers", x.rec, "one", x.ann, file("file", "../dir/a picture.png", img)))
		name, _ = obj["filename"].(string)
		if !storedName.MatchString(name) || !strings.HasSuffix(name, ".png") {
			t.Fatalf("stored name %q", name)
		}
		if obj["originalName"] != "a picture.png" || apitest.Int(t, obj["size"]) != int64(len(img)) || obj["mimeType"] != "image/png" ||
			obj["id"] != strings.TrimSuffix(name, ".png") {
			t.Errorf("file object %v", obj)
		}
		if got := x.record(t, x.rec)["one"]; got != name {
			t.Errorf("record's one = %v, want %s", got, name)
		}
	})

	t.Run("download with headers, ranges and revalidation", func(t *testing.T) {
		st, body, res := download(t, s, fileURL(name), nil)
		if st != 200 || !bytes.Equal(body, img) {
			t.Fatalf("download: %d, %d bytes", st, len(body))
		}
		h := res.Header
		if h.Get("Content-Type") != "image/png" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("ETag") == "" ||
			h.Get("Content-Disposition") != `inline; filename="a picture.png"` || h.Get("Accept-Ranges") != "bytes" {
			t.Errorf("headers %v", h)
		}
		st, body, res = download(t, s, fileURL(name), map[string]string{"Range": "bytes=0-9"})
		if st != 206 || !bytes.Equal(body, img[:10]) || res.Header.Get("Content-Range") != fmt.Sprintf("bytes 0-9/%d", len(img)) {
			t.Errorf("range: %d %q %v", st, body, res.Header)
		}
		if st, _, _ := download(t, s, fileURL(name), map[string]string{"If-None-Match": h.Get("ETag")}); st != 304 {
			t.Errorf("If-None-Match: %d", st)
		}
		if _, _, res := download(t, s, fileURL(name)+"?download=1", nil); !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("download=1: %q", res.Header.Get("Content-Disposition"))
		}
		if st, _, _ := download(t, s, fileURL("00000000-0000-0000-0000-000000000000.png"), nil); st != 404 {
			t.Errorf("unknown file: %d", st)
		}
	})

	t.Run("validation before storing", func(t *testing.T) {
		cases := []struct {
			field string
			parts []formPart
			want  int
		}{
			{"one", []formPart{file("file", "a.png", img), file("file", "b.png", img)}, 400}, // second file on a single field
			{"one", []formPart{file("file", "a.txt", []byte("plain text"))}, 422},            // mimeTypes
			{"one", []formPart{file("file", "big.png", pngBytes(t, 64, 64))}, 422},           // maxSize
			{"many", []formPart{file("file", "p.html", []byte("<!DOCTYPE html><html><body>x</body></html>"))}, 415},
			{"many", []formPart{file("file", "i.svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"></svg>`))}, 415},
			{"many", []formPart{file("file", "x.js", []byte("alert(1)"))}, 415},
			{"many", []formPart{file("file", "x.exe", append([]byte("MZ"), make([]byte, 100)...))}, 415},
			// The client's name and type do not make HTML acceptable.
			{"many", []formPart{{name: "file", fileName: "innocent.png", contentType: "image/png", content: []byte("<html><script>alert(1)</script></html>")}}, 415},
		}
		for _, c := range cases {
			res, out := sendForm(t, s, "POST", up+"/"+c.field, x.ann, c.parts...)
			if res.StatusCode != c.want {
				t.Errorf("%s %s: %d %s, want %d", c.field, c.parts[0].fileName, res.StatusCode, out, c.want)
			}
		}
		if got := x.record(t, x.rec); got["one"] != name || len(apitest.List(t, got["many"])) != 0 {
			t.Errorf("a refused upload changed the record: %v", got)
		}
		s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.max_upload_bytes": "100"})
		res, out := sendForm(t, s, "POST", up+"/many", x.ann, file("file", "t.txt", bytes.Repeat([]byte("a"), 101)))
		s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.max_upload_bytes": "104857600"})
		if res.StatusCode != 422 {
			t.Errorf("over files.max_upload_bytes: %d %s", res.StatusCode, out)
		}
		s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.mime_deny": "text/plain"})
		res, out = sendForm(t, s, "POST", up+"/many", x.ann, file("file", "t.txt", []byte("hello")))
		s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.mime_deny": ""})
		if res.StatusCode != 415 {
			t.Errorf("files.mime_deny text/plain: %d %s", res.StatusCode, out)
		}
		if res, out := sendForm(t, s, "POST", up+"/many", x.ann, file("file", "p.html", []byte("<html></html>"))); res.StatusCode != 201 {
			t.Errorf("HTML with an empty deny list: %d %s", res.StatusCode, out)
		}
		s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.mime_deny": "text/html,application/xhtml+xml,image/svg+xml,application/javascript,text/javascript,application/x-msdownload"})
		s.Do(t, "DELETE", up+"/many", nil, x.ann)
	})

	t.Run("a single field's file is replaced, the old one goes", func(t *testing.T) {
		obj := apitest.Obj(t, uploadOK(t, s, "papers", x.rec, "one", x.ann, file("file", "doc.pdf", pdfBytes)))
		if obj["mimeType"] != "application/pdf" || x.record(t, x.rec)["one"] != obj["filename"] {
			t.Fatalf("replace: %v", obj)
		}
		if st, _, _ := download(t, s, fileURL(name), nil); st != 404 {
			t.Errorf("the replaced file: %d", st)
		}
		name = obj["filename"].(string)
	})

	t.Run("a multiple field appends; delete one, delete all", func(t *testing.T) {
		arr := apitest.List(t, uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "a.txt", []byte("aaa")), file("file", "b.txt", []byte("bbb"))))
		one := apitest.List(t, uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "c.txt", []byte("ccc"))))
		if len(arr) != 2 || len(one) != 1 {
			t.Fatalf("uploads answered %v and %v", arr, one)
		}
		var names []string
		for _, o := range append(arr, one...) {
			names = append(names, apitest.Obj(t, o)["filename"].(string))
		}
		if got := fmt.Sprint(x.record(t, x.rec)["many"]); got != fmt.Sprint(names) {
			t.Fatalf("many = %s, want %v", got, names)
		}
		del := up + "/many/" + names[1]
		if res, out := s.Do(t, "DELETE", del, nil, x.bob); res.StatusCode != 403 {
			t.Errorf("bob deletes: %d %s", res.StatusCode, out)
		}
		if res, out := s.Do(t, "DELETE", del, nil, x.ann); res.StatusCode != 204 {
			t.Fatalf("delete one: %d %s", res.StatusCode, out)
		}
		if res, _ := s.Do(t, "DELETE", del, nil, x.ann); res.StatusCode != 404 {
			t.Errorf("delete it again: %d", res.StatusCode)
		}
		if got := fmt.Sprint(x.record(t, x.rec)["many"]); got != fmt.Sprint([]string{names[0], names[2]}) {
			t.Errorf("many after delete = %s", got)
		}
		if st, _, _ := download(t, s, fileURL(names[1]), nil); st != 404 {
			t.Errorf("a deleted file downloads: %d", st)
		}
		out := data(t, s, 200, "DELETE", up+"/many", nil, x.ann)
		if apitest.Int(t, out["deleted"]) != 2 || len(apitest.List(t, x.record(t, x.rec)["many"])) != 0 {
			t.Errorf("delete all: %v, record %v", out, x.record(t, x.rec))
		}
	})

	t.Run("multipart create and update on the record routes", func(t *testing.T) {
		res, out := sendForm(t, s, "POST", "/api/v1/papers", x.ann, value("title", "with files"), value("owner", x.annID), value("n", "7"),
			file("one", "a.png", img), file("many", "x.txt", []byte("xx")), file("many", "y.txt", []byte("yy")))
		if res.StatusCode != 201 {
			t.Fatalf("multipart create: %d %s", res.StatusCode, out)
		}
		rec := apitest.Obj(t, apitest.DecodeMap(t, out)["data"])
		id := rec["id"].(string)
		many := apitest.List(t, rec["many"])
		if rec["title"] != "with files" || apitest.Int(t, rec["n"]) != 7 || !storedName.MatchString(rec["one"].(string)) || len(many) != 2 {
			t.Fatalf("created %v", rec)
		}
		if st, body, _ := download(t, s, fileURL(many[1].(string)), nil); st != 200 || string(body) != "yy" {
			t.Errorf("download a created file: %d %q", st, body)
		}
		if res, out := sendForm(t, s, "POST", "/api/v1/papers", nil, value("title", "anon"), file("many", "x.txt", []byte("xx"))); res.StatusCode != 401 {
			t.Errorf("anonymous multipart create with a file: %d %s", res.StatusCode, out)
		}
		if res, out := sendForm(t, s, "POST", "/api/v1/papers", x.ann, value("@jsonPayload", `{"title":"json","n":3}`), file("one", "a.png", img), file("one", "b.png", img)); res.StatusCode != 400 {
			t.Errorf("two files for a single field: %d %s", res.StatusCode, out)
		}
		res, out = sendForm(t, s, "POST", "/api/v1/papers", x.ann, value("@jsonPayload", `{"title":"json","n":3}`))
		if res.StatusCode != 201 || !strings.Contains(string(out), `"title":"json"`) || !strings.Contains(string(out), `"n":3`) {
			t.Errorf("@jsonPayload create: %d %s", res.StatusCode, out)
		}
		// Update: "one" replaces, "many+" appends, "many-" removes.
		res, out = sendForm(t, s, "PATCH", "/api/v1/papers/"+id, x.ann, value("title", "changed"), file("one", "b.pdf", pdfBytes),
			file("many+", "z.txt", []byte("zz")), value("many-", many[0].(string)))
		if res.StatusCode != 200 {
			t.Fatalf("multipart update: %d %s", res.StatusCode, out)
		}
		upd := apitest.Obj(t, apitest.DecodeMap(t, out)["data"])
		m2 := apitest.List(t, upd["many"])
		if upd["title"] != "changed" || upd["one"] == rec["one"] || len(m2) != 2 || m2[0] != many[1] {
			t.Errorf("updated %v", upd)
		}
		if st, _, _ := download(t, s, fileURL(rec["one"].(string)), nil); st != 404 {
			t.Errorf("the replaced file downloads: %d", st)
		}
		if res, out := sendForm(t, s, "PATCH", "/api/v1/papers/"+id, x.bob, value("title", "bob")); res.StatusCode != 403 {
			t.Errorf("bob's multipart update: %d %s", res.StatusCode, out)
		}
		if res, out := sendForm(t, s, "PATCH", "/api/v1/papers/"+id, map[string]string{"Authorization": x.ann["Authorization"], "If-Match": `W/"stale"`}, value("title", "x")); res.StatusCode != 412 {
			t.Errorf("multipart update with a stale If-Match: %d %s", res.StatusCode, out)
		}
		// A JSON update that clears a file field removes its files.
		s.MustAdmin(t, 200, "PATCH", "/api/v1/papers/"+id, map[string]any{"many": nil})
		if st, _, _ := download(t, s, fileURL(m2[1].(string)), nil); st != 404 {
			t.Errorf("a cleared field's file downloads: %d", st)
		}
		// Deleting the record removes its files.
		s.MustAdmin(t, 204, "DELETE", "/api/v1/papers/"+id, nil)
		if st, _, _ := download(t, s, fileURL(upd["one"].(string)), nil); st != 404 {
			t.Errorf("a deleted record's file downloads: %d", st)
		}
	})
}
