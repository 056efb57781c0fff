package api_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"svcd/api/apitest"
)

// s3Peer is an S3-compatible server holding one bucket, with a client
// that reads the bucket through the S3 protocol.
type s3Peer struct {
	// settings are the s3.* settings that name the bucket, as an
	// administrator sets them.
	settings map[string]any
	bucket   string
	client   *s3.Client
	// checksSignatures: the server refuses a wrong key, region or
	// anonymous requests (versitygw; gofakes3 accepts anything).
	checksSignatures bool
}

// s3Server starts one kind of S3-compatible server for a test.
type s3Server struct {
	name  string
	start func(t *testing.T) *s3Peer
}

// s3Servers are the servers the Files section runs against: gofakes3
// (memory backend) in process, and versitygw (posix backend), a real
// gateway binary out of process; a missing versitygw skips its subtests
// (fails them under CI=1).
func s3Servers() []s3Server {
	return []s3Server{{"gofakes3", startGofakes3}, {"versitygw", startVersityGW}}
}

// eachS3 runs fn in a parallel subtest per S3 server, each with its own
// server.
func eachS3(t *testing.T, fn func(t *testing.T, peer *s3Peer)) {
	for _, srv := range s3Servers() {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			fn(t, srv.start(t))
		})
	}
}

func startGofakes3(t *testing.T) *s3Peer {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("svc-files"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	// gofakes3 writes a second status on a request the client abandoned
	// (an upload refused for its size); net/http's complaint is noise.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return &s3Peer{
		settings: map[string]any{
			"s3.endpoint": srv.URL, "s3.bucket": "svc-files", "s3.region": "us-east-1",
			"s3.access_key_id": "test-key", "s3.secret_access_key": "test-secret",
		},
		bucket: "svc-files",
		client: apitest.S3Client(srv.URL, "us-east-1", "test-key", "test-secret"),
	}
}

func startVersityGW(t *testing.T) *s3Peer {
	t.Helper()
	g := apitest.StartVersityGW(t, "svc-files")
	return &s3Peer{settings: g.Settings(), bucket: g.Bucket, client: g.Client, checksSignatures: true}
}

// useS3 points s at the peer and makes S3 the driver of new uploads.
func (p *s3Peer) useS3(t *testing.T, s *apitest.Server) {
	t.Helper()
	s.MustAdmin(t, 200, "PATCH", settingsURL, p.s3Settings())
}

// s3Settings are the peer's s3.* settings with storage.driver s3.
func (p *s3Peer) s3Settings() map[string]any {
	out := map[string]any{"storage.driver": "s3"}
	for k, v := range p.settings {
		out[k] = v
	}
	return out
}

// object reads key from the bucket (nil when absent).
func (p *s3Peer) object(t *testing.T, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	obj, err := p.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(p.bucket), Key: aws.String(key)})
	if nsk := (*types.NoSuchKey)(nil); errors.As(err, &nsk) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s from the bucket: %v", key, err)
	}
	defer obj.Body.Close()
	b, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFilesS3 runs the Files section against the S3 driver, on each S3
// server: the scenarios of the local driver (uploads, downloads under the
// rules, tokens, field flags, delete one and all, multipart record
// writes) and thumbnails of a source read from the bucket.
func TestFilesS3(t *testing.T) {
	t.Parallel()
	eachS3(t, func(t *testing.T, peer *s3Peer) {
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
		t.Run("thumbnails", func(t *testing.T) {
			s := apitest.Start(t, apitest.Options{})
			peer.useS3(t, s)
			testFilesThumbnails(t, s)
		})
	})
}

// TestFilesDriverSwitch: files keep the driver they were stored with, so
// switching storage.driver loses nothing; the bytes are where the driver
// says.
func TestFilesDriverSwitch(t *testing.T) {
	t.Parallel()
	eachS3(t, testFilesDriverSwitch)
}

func testFilesDriverSwitch(t *testing.T, peer *s3Peer) {
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
	eachS3(t, testFilesS3Redirect)
}

func testFilesS3Redirect(t *testing.T, peer *s3Peer) {
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
