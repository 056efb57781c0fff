package api_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"svcd/api/apitest"
)

// s3Peer is a real S3-compatible server in-process (gofakes3, memory
// backend) with one bucket.
type s3Peer struct {
	url     string
	bucket  string
	backend *s3mem.Backend
}

func startS3(t *testing.T) *s3Peer {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("svc-files"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	return &s3Peer{url: srv.URL, bucket: "svc-files", backend: backend}
}

// useS3 points s at the peer and makes S3 the driver of new uploads.
func (p *s3Peer) useS3(t *testing.T, s *apitest.Server) {
	t.Helper()
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{
		"storage.driver": "s3", "s3.endpoint": p.url, "s3.bucket": p.bucket, "s3.region": "us-east-1",
		"s3.access_key_id": "test-key", "s3.secret_access_key": "test-secret",
	})
}

// object reads key from the bucket (nil when absent).
func (p *s3Peer) object(t *testing.T, key string) []byte {
	t.Helper()
	obj, err := p.backend.GetObject(p.bucket, key, nil)
	if err != nil {
		return nil
	}
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFilesS3 runs the Files section against the S3 driver.
func TestFilesS3(t *testing.T) {
	t.Parallel()
	peer := startS3(t)
	t.Run("core", func(t *testing.T) {
		s := apitest.Start(t, apitest.Options{})
		peer.useS3(t, s)
		testFilesCore(t, s)
	})
	t.Run("flags", func(t *testing.T) {
		s := apitest.Start(t, apitest.Options{})
		peer.useS3(t, s)
		testFileFieldFlags(t, s)
	})
}

// TestFilesDriverSwitch: files keep the driver they were stored with, so
// switching storage.driver loses nothing; the bytes are where the driver
// says.
func TestFilesDriverSwitch(t *testing.T) {
	t.Parallel()
	peer := startS3(t)
	s := apitest.Start(t, apitest.Options{})
	x := newFilesFixture(t, s)
	localName := apitest.Obj(t, uploadOK(t, s, "papers", x.rec, "one", x.ann, file("file", "doc.pdf", pdfBytes)))["filename"].(string)
	if _, err := os.Stat(filepath.Join(s.DataDir, "storage", localName)); err != nil {
		t.Fatalf("the local driver's file is not in the data directory: %v", err)
	}
	peer.useS3(t, s)
	s3Name := apitest.List(t, uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "a.txt", []byte("on s3"))))[0]
	key := apitest.Obj(t, s3Name)["filename"].(string)
	if got := peer.object(t, key); string(got) != "on s3" {
		t.Errorf("the bucket holds %q under %s", got, key)
	}
	if _, err := os.Stat(filepath.Join(s.DataDir, "storage", key)); err == nil {
		t.Errorf("an S3 upload was stored locally")
	}
	for name, want := range map[string][]byte{localName: pdfBytes, key: []byte("on s3")} {
		if st, body, _ := download(t, s, fileURL(name), nil); st != 200 || !bytes.Equal(body, want) {
			t.Errorf("download %s after the switch: %d %q", name, st, body)
		}
	}
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"storage.driver": "local"})
	if st, body, _ := download(t, s, fileURL(key), nil); st != 200 || string(body) != "on s3" {
		t.Errorf("an S3 file after switching back: %d %q", st, body)
	}
	// S3 misconfigured: uploads answer 503, nothing is recorded.
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"storage.driver": "s3", "s3.bucket": ""})
	res, out := sendForm(t, s, "POST", "/api/v1/files/papers/"+x.rec+"/many", x.ann, file("file", "b.txt", []byte("b")))
	if res.StatusCode != 503 {
		t.Errorf("upload with no bucket: %d %s", res.StatusCode, out)
	}
}

// TestFilesS3Redirect: with storage.redirect_downloads an S3 download
// answers 302 to a presigned URL, or under s3.public_url, after the access
// checks and the audit row; never for oneTimeToken and bindTokenIp fields
// or thumbnails, and never on the local driver.
func TestFilesS3Redirect(t *testing.T) {
	t.Parallel()
	peer := startS3(t)
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("shots", "base", []map[string]any{
		f("pic", "file"), f("once", "file", "oneTimeToken", true), f("bound", "file", "bindTokenIp", true),
		f("aud", "file", "auditDownloads", true), f("adm", "file", "viewRule", ""),
	}, "view_rule", ""))
	admin := s.AdminHeaders(t, nil)
	localRec := s.CreateRecord(t, "shots", map[string]any{})["id"].(string)
	localName := apitest.Obj(t, uploadOK(t, s, "shots", localRec, "pic", admin, file("file", "l.txt", []byte("local"))))["filename"].(string)
	peer.useS3(t, s)
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"storage.redirect_downloads": "1"})
	rec := s.CreateRecord(t, "shots", map[string]any{})["id"].(string)
	names := map[string]string{}
	for _, field := range []string{"pic", "once", "bound", "aud", "adm"} {
		names[field] = apitest.Obj(t, uploadOK(t, s, "shots", rec, field, admin, file("file", field+".txt", []byte("s3 "+field))))["filename"].(string)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, h map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := get(fileURL(names["pic"]), nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != 302 || !strings.Contains(loc, "X-Amz-Signature") || !strings.Contains(loc, names["pic"]) {
		t.Fatalf("redirect: %d %q", res.StatusCode, loc)
	}
	direct, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(direct.Body)
	direct.Body.Close()
	if direct.StatusCode != 200 || string(body) != "s3 pic" {
		t.Errorf("the presigned URL: %d %q", direct.StatusCode, body)
	}
	if res := get(fileURL(names["adm"]), nil); res.StatusCode != 403 {
		t.Errorf("an admin-only file redirects anonymous callers: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	for _, path := range []string{fileURL(localName), fileURL(names["pic"]) + "?thumb=10x10"} {
		if res := get(path, nil); res.StatusCode != 200 {
			t.Errorf("%s: %d, want the bytes", path, res.StatusCode)
		}
	}
	for _, field := range []string{"once", "bound"} {
		tok := data(t, s, 200, "POST", "/api/v1/files/shots/"+rec+"/"+field+"/"+names[field]+"/token", nil, admin)["token"].(string)
		if res := get(fileURL(names[field])+"?token="+tok, nil); res.StatusCode != 200 {
			t.Errorf("%s: %d, want the bytes from the service", field, res.StatusCode)
		}
	}
	if res := get(fileURL(names["aud"]), nil); res.StatusCode != 302 {
		t.Errorf("audited redirect: %d", res.StatusCode)
	}
	out := s.MustAdmin(t, 200, "GET", "/api/v1/admin/audit-log?actionPrefix=files.", nil)
	if rows := apitest.List(t, apitest.Obj(t, out["data"])["data"]); len(rows) != 1 {
		t.Errorf("audit rows of a redirected download: %v", rows)
	}
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"s3.public_url": "https://cdn.example.com/files/"})
	if res := get(fileURL(names["pic"]), nil); res.StatusCode != 302 || res.Header.Get("Location") != "https://cdn.example.com/files/"+names["pic"] {
		t.Errorf("public URL redirect: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}
