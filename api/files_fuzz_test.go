package api_test

import (
	"bytes"
	"context"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"svcd/api/apitest"
	"svcd/fsm"
)

// fuzzBoundary is the multipart boundary of FuzzUpload's bodies.
const fuzzBoundary = "svcfuzzboundary"

// FuzzUpload sends arbitrary multipart bodies (boundary fuzzBoundary) to
// a live node started once per run, to the files endpoint of a single and
// of a multiple field and as multipart record creates and updates, as a
// signed-in owner or anonymously (the low three bits of target). Every
// answer is a success or SPEC.md's envelope among 400, 401, 403, 404,
// 413, 415 and 422: never a 500 nor a dropped connection. And nothing
// leaks into storage: after every request, the blobs on disk are exactly
// the files the metadata names (a refused upload leaves none behind).
func FuzzUpload(f *testing.F) {
	x := seedUploadFuzz(f)
	for _, sd := range uploadFuzzSeeds(f) {
		f.Add(sd.body, sd.target)
	}
	f.Fuzz(func(t *testing.T, body []byte, target uint8) {
		if len(body) > 1<<20 {
			return
		}
		x.check(t, body, target)
	})
}

type uploadFuzz struct {
	s     *apitest.Server
	owner map[string]string
	rec   string
}

// uploadFuzzTargets are the requests of FuzzUpload, by target's bits 0-1.
var uploadFuzzTargets = [4]struct{ method, path string }{
	{"POST", "/api/v1/files/papers/{rec}/one"},
	{"POST", "/api/v1/files/papers/{rec}/many"},
	{"POST", "/api/v1/papers"},
	{"PATCH", "/api/v1/papers/{rec}"},
}

func seedUploadFuzz(tf *testing.F) *uploadFuzz {
	s := apitest.Start(tf, apitest.Options{})
	s.CreateCollection(tf, usersCollection())
	s.CreateCollection(tf, coll("papers", "base", []map[string]any{
		f("title", "text"), f("owner", "relation", "collection", "users"), f("n", "number"),
		f("one", "file", "maxSize", 2000, "mimeTypes", []string{"image/png", "text/plain"}),
		f("many", "file", "multiple", true, "maxSize", 4000),
	}, "view_rule", "", "create_rule", `@request.auth.id != ""`, "update_rule", "owner = @request.auth.id"))
	owner := bearer(signUp(tf, s, "owner@example.com"))
	id := listIDs(tf, s, "/api/v1/users")[0]
	rec := s.CreateRecord(tf, "papers", map[string]any{"title": "t", "owner": id})["id"].(string)
	return &uploadFuzz{s: s, owner: owner, rec: rec}
}

func (x *uploadFuzz) check(t *testing.T, body []byte, target uint8) {
	tg := uploadFuzzTargets[target&3]
	path := strings.Replace(tg.path, "{rec}", x.rec, 1)
	h := map[string]string{"Content-Type": "multipart/form-data; boundary=" + fuzzBoundary}
	if target&4 == 0 {
		for k, v := range x.owner {
			h[k] = v
		}
	}
	res, out, err := x.s.Send(tg.method, path, body, h)
	if err != nil {
		t.Fatalf("%s %s: %v", tg.method, path, err)
	}
	apitest.CheckCommon(t, res, out)
	ok := []int{200, 201, 400, 401, 403, 404, 413, 415, 422}
	if !slices.Contains(ok, res.StatusCode) {
		t.Fatalf("%s %s: %d %s", tg.method, path, res.StatusCode, out)
	}
	x.storageMatchesMetadata(t)
}

// storageMatchesMetadata: every blob on disk is a file a record names or
// a tombstone keeps (no grace period has passed), and the reverse.
func (x *uploadFuzz) storageMatchesMetadata(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(x.s.DataDir, "storage"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	var named []string
	err = x.s.Stack.Store.View(context.Background(), func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT name FROM _svc_files UNION SELECT name FROM _svc_files_deleted ORDER BY 1`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			named = append(named, n)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(onDisk)
	if !slices.Equal(onDisk, named) {
		t.Fatalf("blobs on disk %v, files named %v", onDisk, named)
	}
}

type uploadFuzzSeed struct {
	body   []byte
	target uint8
}

// uploadFuzzSeeds are well-formed requests of every kind; the corpus in
// testdata/fuzz/FuzzUpload adds malformed ones.
func uploadFuzzSeeds(t testing.TB) []uploadFuzzSeed {
	body := func(parts ...formPart) []byte {
		b, _ := multipartBodyWith(t, fuzzBoundary, parts...)
		return b
	}
	png := pngBytes(t, 4, 4)
	return []uploadFuzzSeed{
		{body(file("file", "a.png", png)), 0},
		{body(file("file", "a.png", png), file("file", "b.png", png)), 0},
		{body(file("file", "a.txt", []byte("hello")), file("file", "b.txt", []byte("world"))), 1},
		{body(file("file", "p.html", []byte("<html></html>"))), 1},
		{body(value("title", "x"), value("n", "3"), file("one", "a.png", png), file("many", "c.txt", []byte("c"))), 2},
		{body(value("@jsonPayload", `{"title":"j","n":1.5}`), file("many", "c.txt", []byte("c"))), 2},
		{body(value("title", "y"), file("many+", "d.txt", []byte("d")), value("many-", "nope.txt"), value("one", "")), 3},
		{body(file("file", "a.png", png)), 4},
		{[]byte("--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nabc"), 1},
	}
}

// multipartBodyWith is multipartBody with a fixed boundary.
func multipartBodyWith(t testing.TB, boundary string, parts ...formPart) ([]byte, string) {
	t.Helper()
	b, ct := multipartBody(t, parts...)
	_, params, err := mime.ParseMediaType(ct)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(b, []byte(params["boundary"]), []byte(boundary)), "multipart/form-data; boundary=" + boundary
}
