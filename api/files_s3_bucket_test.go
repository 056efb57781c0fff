package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"svcd/api/apitest"
)

// keys lists the bucket's keys, sorted.
func (p *s3Peer) keys(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	pages := s3.NewListObjectsV2Paginator(p.client, &s3.ListObjectsV2Input{Bucket: aws.String(p.bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("list the bucket: %v", err)
		}
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
	}
	slices.Sort(out)
	return out
}

// uploads lists the keys of the bucket's multipart uploads in progress.
func (p *s3Peer) uploads(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(p.bucket)})
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys
}

// put writes key into the bucket directly (not through svcd).
func (p *s3Peer) put(t *testing.T, key string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(p.bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// TestFilesS3Bucket checks what svcd leaves in the bucket, read through
// the S3 protocol, on each S3 server: a file larger than one part of a
// multipart upload arrives whole and serves ranges across parts; an
// upload refused for its size after some parts were sent leaves no
// object and no unfinished multipart upload; thumbnails stay on the
// node's disk; the collector removes the bytes of deleted files after the
// grace period and unreferenced objects svcd wrote, and never a key svcd
// does not write.
func TestFilesS3Bucket(t *testing.T) {
	t.Parallel()
	eachS3(t, testFilesS3Bucket)
}

func testFilesS3Bucket(t *testing.T, peer *s3Peer) {
	s := apitest.Start(t, apitest.Options{})
	x := newFilesFixture(t, s)
	peer.useS3(t, s)
	up := "/api/v1/files/papers/" + x.rec + "/many"

	// 20 MiB: s3blob (the SDK's transfer manager) sends a multipart upload
	// from 16 MiB on, in parts of 8 MiB: three parts.
	const size, part = 20 << 20, 8 << 20
	big := make([]byte, size)
	if _, err := io.ReadFull(&patternReader{n: size, x: 3}, big); err != nil {
		t.Fatal(err)
	}
	obj := apitest.Obj(t, apitest.List(t, uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "big.bin", big)))[0])
	bigName := obj["filename"].(string)
	if got := peer.object(t, bigName); sha256.Sum256(got) != sha256.Sum256(big) {
		t.Fatalf("the bucket holds %d bytes under %s, not the %d uploaded", len(got), bigName, size)
	}
	st, body, _ := download(t, s, fileURL(bigName), nil)
	if st != 200 || !bytes.Equal(body, big) {
		t.Fatalf("download of the large file: %d, %d bytes", st, len(body))
	}
	st, body, _ = download(t, s, fileURL(bigName), map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", part-10, part+9)})
	if st != 206 || !bytes.Equal(body, big[part-10:part+10]) {
		t.Errorf("a range across the first part's end: %d %q", st, body)
	}

	// Over files.max_upload_bytes (18 MiB) once two parts have gone to
	// the bucket.
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.max_upload_bytes": strconv.Itoa(18 << 20)})
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", "too-big.bin")
		if err == nil {
			_, err = io.Copy(part, &patternReader{n: size, x: 5})
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", s.URL+up, pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", x.ann["Authorization"])
	res, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	pr.Close()
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.max_upload_bytes": "104857600"})
	if res.StatusCode != 422 {
		t.Errorf("an upload over the limit: %d %s", res.StatusCode, out)
	}
	if got := peer.keys(t); !slices.Equal(got, []string{bigName}) {
		t.Errorf("after a refused upload the bucket holds %v, want only %s", got, bigName)
	}
	if got := peer.uploads(t); len(got) != 0 {
		t.Errorf("a refused upload left multipart uploads in the bucket: %v", got)
	}

	// Thumbnails are cached on the node, not in the bucket.
	pic := apitest.Obj(t, apitest.List(t, uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "p.png", pngBytes(t, 40, 30))))[0])["filename"].(string)
	if st, body, _ := download(t, s, fileURL(pic)+"?thumb=8x8_cover", nil); st != 200 || bytes.Equal(body, peer.object(t, pic)) {
		t.Fatalf("thumbnail of an S3 source: %d, %d bytes", st, len(body))
	}
	if got, want := peer.keys(t), sortedOf(bigName, pic); !slices.Equal(got, want) {
		t.Errorf("after a thumbnail the bucket holds %v, want %v", got, want)
	}

	// The collector: deleted files after the grace period, orphans svcd
	// wrote, never foreign keys.
	s.MustAdmin(t, 204, "DELETE", up+"/"+bigName, nil)
	orphan, foreign := "00000000-0000-4000-8000-000000000000.txt", "backups/not-ours.txt"
	peer.put(t, orphan, []byte("an upload whose command never committed"))
	peer.put(t, foreign, []byte("someone else's"))
	collect := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Stack.Files.Collector().Collect(ctx, true); err != nil {
			t.Fatalf("collect: %v", err)
		}
	}
	collect()
	if got, want := peer.keys(t), sortedOf(bigName, pic, orphan, foreign); !slices.Equal(got, want) {
		t.Errorf("within the grace period the bucket holds %v, want %v", got, want)
	}
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.delete_grace_seconds": "0"})
	collect()
	if got, want := peer.keys(t), sortedOf(pic, foreign); !slices.Equal(got, want) {
		t.Errorf("after the grace period the bucket holds %v, want %v", got, want)
	}
	if st, body, _ := download(t, s, fileURL(pic), nil); st != 200 || !bytes.Equal(body, peer.object(t, pic)) {
		t.Errorf("the kept file after the collector: %d, %d bytes", st, len(body))
	}
}

// sortedOf is keys sorted.
func sortedOf(keys ...string) []string {
	slices.Sort(keys)
	return keys
}
