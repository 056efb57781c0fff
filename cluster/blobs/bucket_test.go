package blobs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// failingReader yields n bytes, then fails.
type failingReader struct{ n int }

var errClientGone = errors.New("client gone")

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errClientGone
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// stores opens a local store in a temporary directory and an S3 store on
// an in-process S3 server (gofakes3); it also returns a client of that
// server.
func stores(t *testing.T) (map[string]*Bucket, *s3.Client) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("b"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	settings := map[string]string{"s3.endpoint": srv.URL, "s3.bucket": "b", "s3.region": "us-east-1", "s3.access_key_id": "k", "s3.secret_access_key": "s"}
	s := New(t.TempDir(), func(k string) string { return settings[k] })
	t.Cleanup(func() { s.Close() })
	out := map[string]*Bucket{}
	for _, d := range []string{"local", "s3"} {
		b, err := s.Store(context.Background(), d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		out[d] = b
	}
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	return out, client
}

// TestBucketPutIsAllOrNothing: a Put whose reader fails (a size limit, a
// client gone) leaves nothing under its key, on both drivers, and no
// multipart upload in the bucket; a complete one reads back, seeks, lists
// and deletes. (api's TestFilesS3Bucket runs the same against versitygw.)
func TestBucketPutIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	all, client := stores(t)
	for d, b := range all {
		t.Run(d, func(t *testing.T) {
			// 20 MiB: s3blob starts a multipart upload at 16 MiB and
			// sends parts of 8 MiB, so S3 has one to abort.
			err := b.Put(ctx, "half.bin", "application/octet-stream", &failingReader{n: 20 << 20})
			if !errors.Is(err, errClientGone) {
				t.Errorf("failed put: %v", err)
			}
			if _, err := b.Open(ctx, "half.bin"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a failed put left a blob: %v", err)
			}
			if d == "s3" {
				out, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("b")})
				if err != nil {
					t.Fatalf("list multipart uploads: %v", err)
				}
				if len(out.Uploads) != 0 {
					t.Errorf("a failed put left %d multipart uploads, of %s", len(out.Uploads), aws.ToString(out.Uploads[0].Key))
				}
			}
			content := bytes.Repeat([]byte("0123456789"), 1000)
			if err := b.Put(ctx, "k.bin", "application/octet-stream", bytes.NewReader(content)); err != nil {
				t.Fatal(err)
			}
			r, err := b.Open(ctx, "k.bin")
			if err != nil {
				t.Fatal(err)
			}
			if r.Size() != int64(len(content)) || time.Since(r.ModTime()) > time.Minute {
				t.Errorf("size %d, modified %v", r.Size(), r.ModTime())
			}
			if _, err := r.Seek(9990, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			tail, _ := io.ReadAll(r)
			r.Close()
			if string(tail) != "0123456789" {
				t.Errorf("after a seek: %q", tail)
			}
			var keys []string
			if err := b.List(ctx, func(k string, _ time.Time) error { keys = append(keys, k); return nil }); err != nil {
				t.Fatal(err)
			}
			if strings.Join(keys, ",") != "k.bin" {
				t.Errorf("keys %v", keys)
			}
			u, err := b.DownloadURL(ctx, "k.bin", time.Minute)
			if d == "s3" && (err != nil || !strings.Contains(u, "k.bin")) || d == "local" && err == nil {
				t.Errorf("download URL %q, %v", u, err)
			}
			if err := b.Delete(ctx, "k.bin"); err != nil {
				t.Fatal(err)
			}
			if err := b.Delete(ctx, "k.bin"); err != nil {
				t.Errorf("deleting a missing blob: %v", err)
			}
			if _, err := b.Open(ctx, "k.bin"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a deleted blob opens: %v", err)
			}
		})
	}
}
