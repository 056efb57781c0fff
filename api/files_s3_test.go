package api_test

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
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
