package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/api/apitest"
)

// patternReader yields n bytes of a pattern that does not compress,
// generated as it is read: nothing of the upload exists in memory at once
// on the client side either.
type patternReader struct {
	n, off int64
	x      uint64
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		p.x = p.x*6364136223846793005 + 1442695040888963407
		b[i] = byte(p.x >> 56)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// TestFilesUploadStreams: a 96 MiB upload and its download go through the
// node without the node's heap growing by anything near the file's size
// (the bytes stream from the request to the store and back), and arrive
// intact (SHA-256 on both sides).
func TestFilesUploadStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 96 MiB twice")
	}
	const size = 96 << 20
	s := apitest.Start(t, apitest.Options{})
	x := newFilesFixture(t, s)
	s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"files.max_upload_bytes": "209715200"})

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	sum := sha256.New()
	go func() {
		part, err := mw.CreateFormFile("file", "big.bin")
		if err == nil {
			_, err = io.Copy(io.MultiWriter(part, sum), &patternReader{n: size, x: 7})
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", s.URL+"/api/v1/files/papers/"+x.rec+"/many", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", x.ann["Authorization"])
	res, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Fatalf("upload: %d %s", res.StatusCode, body)
	}
	obj := apitest.Obj(t, apitest.List(t, apitest.DecodeMap(t, body)["data"])[0])
	if apitest.Int(t, obj["size"]) != size {
		t.Fatalf("stored size %v", obj["size"])
	}

	res, err = s.Client.Get(s.URL + fileURL(obj["filename"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	n, err := io.Copy(got, res.Body)
	res.Body.Close()
	close(stop)
	wg.Wait()
	if err != nil || n != size || hex.EncodeToString(got.Sum(nil)) != hex.EncodeToString(sum.Sum(nil)) {
		t.Fatalf("download: %d bytes, err %v, digest differs: %v", n, err, hex.EncodeToString(got.Sum(nil)) != hex.EncodeToString(sum.Sum(nil)))
	}
	grew := int64(peak.Load()) - int64(base)
	t.Logf("heap in use grew by %d KiB at most while moving %d MiB up and down", grew>>10, size>>20)
	if grew > 32<<20 {
		t.Errorf("the heap grew by %d MiB for a %d MiB file: the upload or download is buffered", grew>>20, size>>20)
	}
}
