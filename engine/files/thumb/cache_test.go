package thumb

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// source is a test original: its bytes, how many times it was opened,
// and an optional gate every read waits on (to hold a generation open).
type source struct {
	data  []byte
	opens atomic.Int32
	gate  chan struct{} // nil: no wait
	open  chan struct{} // closed on the first open, when not nil
	once  sync.Once
}

func (s *source) Open(context.Context) (io.ReadCloser, error) {
	s.opens.Add(1)
	if s.open != nil {
		s.once.Do(func() { close(s.open) })
	}
	return io.NopCloser(&gated{r: bytes.NewReader(s.data), gate: s.gate}), nil
}

type gated struct {
	r    io.Reader
	gate chan struct{}
}

func (g *gated) Read(p []byte) (int, error) {
	if g.gate != nil {
		<-g.gate
	}
	return g.r.Read(p)
}

func newCache(t *testing.T) (*Cache, string) {
	t.Helper()
	dir := t.TempDir()
	c, err := NewCache(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

func readAll(t *testing.T, th *Thumbnail) []byte {
	t.Helper()
	defer th.File.Close()
	b, err := io.ReadAll(th.File)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != th.Size {
		t.Fatalf("read %d bytes, Size says %d", len(b), th.Size)
	}
	return b
}

// TestCacheGeneratesOnceUnderConcurrency: many requests for the same
// variant at once read the source once and generate once; all get the
// same bytes, and later requests are served from disk.
func TestCacheGeneratesOnceUnderConcurrency(t *testing.T) {
	c, _ := newCache(t)
	src := &source{data: encodeAs(t, JPEG, photo(600, 400)), gate: make(chan struct{})}
	spec := Spec{Width: 100, Height: 100, Fit: Cover}
	const n = 24
	results := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			th, err := c.Open(context.Background(), "col/rec/a.jpg", "image/jpeg", spec, src.Open)
			if err != nil {
				errs[i] = err
				return
			}
			if th.MIME() != "image/jpeg" {
				errs[i] = errors.New("mime " + th.MIME())
			}
			results[i] = readAll(t, th)
		}(i)
	}
	time.Sleep(100 * time.Millisecond) // let them all ask while the source is held
	close(src.gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if !bytes.Equal(results[i], results[0]) {
			t.Fatalf("request %d got other bytes", i)
		}
	}
	if d := decodeOutput(t, results[0]); d.format != JPEG || d.width != 100 || d.height != 100 {
		t.Fatalf("thumbnail is %s %dx%d", d.format, d.width, d.height)
	}
	if got := src.opens.Load(); got != 1 {
		t.Errorf("source opened %d times, want 1", got)
	}
	if got := c.Generations(); got != 1 {
		t.Errorf("%d generations, want 1", got)
	}
	// Served from disk from now on.
	th, err := c.Open(context.Background(), "col/rec/a.jpg", "image/jpeg", spec, src.Open)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, th), results[0]) || src.opens.Load() != 1 || c.Generations() != 1 {
		t.Errorf("a later request was not served from the cache (opens %d, generations %d)", src.opens.Load(), c.Generations())
	}
}

// TestCacheVariantKeys: the ways of writing one request share a variant;
// other sizes, fits and sources do not.
func TestCacheVariantKeys(t *testing.T) {
	c, _ := newCache(t)
	src := &source{data: encodeAs(t, PNG, photo(300, 200))}
	other := &source{data: encodeAs(t, PNG, photo(300, 200))}
	get := func(name string, s *source, thumb, fit string) {
		t.Helper()
		spec, ok := ParseSpec(thumb, fit)
		if !ok {
			t.Fatalf("ParseSpec(%q, %q)", thumb, fit)
		}
		th, err := c.Open(context.Background(), name, "image/png", spec, s.Open)
		if err != nil {
			t.Fatal(err)
		}
		th.File.Close()
	}
	get("a.png", src, "50x50", "")
	get("a.png", src, "50x50_contain", "")
	get("a.png", src, "50x50", "contain")
	get("a.png", src, "9000x50", "") // clamped: 4096x50
	get("a.png", src, "4096x50", "")
	get("a.png", src, "50x50_crop", "")
	get("a.png", src, "50x50", "cover")
	get("b.png", other, "50x50", "")
	if got := c.Generations(); got != 4 {
		t.Errorf("%d generations, want 4 (50x50 contain, 4096x50 contain, 50x50 cover, b.png)", got)
	}
	if src.opens.Load() != 3 || other.opens.Load() != 1 {
		t.Errorf("opens: a.png %d, b.png %d; want 3 and 1", src.opens.Load(), other.opens.Load())
	}
}

// TestCacheDeleteSource removes every variant of a source and no other's;
// the next request generates again.
func TestCacheDeleteSource(t *testing.T) {
	c, dir := newCache(t)
	a := &source{data: encodeAs(t, GIF, photo(120, 80))}
	b := &source{data: encodeAs(t, GIF, photo(120, 80))}
	for _, s := range []Spec{{Width: 10, Height: 10}, {Width: 20, Height: 20, Fit: Cover}} {
		for name, src := range map[string]*source{"a.gif": a, "b.gif": b} {
			th, err := c.Open(context.Background(), name, "image/gif", s, src.Open)
			if err != nil {
				t.Fatal(err)
			}
			if th.MIME() != "image/png" {
				t.Errorf("single-frame GIF thumbnail is %s", th.MIME())
			}
			th.File.Close()
		}
	}
	if n := countFiles(t, dir); n != 4 {
		t.Fatalf("%d cached files, want 4", n)
	}
	if err := c.DeleteSource("a.gif"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSource("never-thumbnailed.gif"); err != nil {
		t.Fatal(err)
	}
	if n := countFiles(t, dir); n != 2 {
		t.Fatalf("%d cached files after deleting a.gif's, want b.gif's 2", n)
	}
	if _, err := os.Stat(c.sourceDir("a.gif")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a.gif's directory is still there: %v", err)
	}
	gens := c.Generations()
	th, err := c.Open(context.Background(), "b.gif", "image/gif", Spec{Width: 10, Height: 10}, b.Open)
	if err != nil {
		t.Fatal(err)
	}
	th.File.Close()
	th, err = c.Open(context.Background(), "a.gif", "image/gif", Spec{Width: 10, Height: 10}, a.Open)
	if err != nil {
		t.Fatal(err)
	}
	th.File.Close()
	if got := c.Generations() - gens; got != 1 {
		t.Errorf("%d generations after the delete, want 1 (a.gif again; b.gif cached)", got)
	}
}

// TestCacheDeleteDuringGeneration: a thumbnail whose source is deleted
// while it is generated is not kept.
func TestCacheDeleteDuringGeneration(t *testing.T) {
	c, dir := newCache(t)
	src := &source{data: encodeAs(t, PNG, photo(300, 200)), gate: make(chan struct{}), open: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		th, err := c.Open(context.Background(), "a.png", "image/png", Spec{Width: 50, Height: 50}, src.Open)
		if th != nil {
			th.File.Close()
		}
		done <- err
	}()
	<-src.open
	if err := c.DeleteSource("a.png"); err != nil {
		t.Fatal(err)
	}
	close(src.gate)
	if err := <-done; !errors.Is(err, ErrSourceDeleted) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrSourceDeleted", err)
	}
	if n := countFiles(t, dir); n != 0 {
		t.Errorf("%d files kept for a deleted source", n)
	}
	if len(c.active) != 0 {
		t.Errorf("state of finished generations kept: %v", c.active)
	}
}

// TestCacheRefusalCached: a refusal is remembered, so the source is not
// read again for it; an unsupported type is refused without reading.
func TestCacheRefusalCached(t *testing.T) {
	c, _ := newCache(t)
	bomb := &source{data: pngBomb(100000, 100000)}
	for i := 0; i < 3; i++ {
		_, err := c.Open(context.Background(), "bomb.png", "image/png", Spec{Width: 10, Height: 10}, bomb.Open)
		if !errors.Is(err, ErrNotThumbnailable) {
			t.Fatalf("request %d: err = %v", i, err)
		}
	}
	if bomb.opens.Load() != 1 || c.Generations() != 1 {
		t.Errorf("opens %d, generations %d; want 1 and 1", bomb.opens.Load(), c.Generations())
	}
	pdf := &source{data: []byte("%PDF-1.4")}
	if _, err := c.Open(context.Background(), "a.pdf", "application/pdf", Spec{Width: 10, Height: 10}, pdf.Open); !errors.Is(err, ErrNotThumbnailable) || pdf.opens.Load() != 0 {
		t.Errorf("pdf: err %v, opens %d", err, pdf.opens.Load())
	}
}

// TestCacheSourceErrorsNotCached: a source that fails to open or read is
// an error for this request only.
func TestCacheSourceErrorsNotCached(t *testing.T) {
	c, _ := newCache(t)
	raw := encodeAs(t, JPEG, photo(300, 200))
	calls := 0
	flaky := func(context.Context) (io.ReadCloser, error) {
		calls++
		switch calls {
		case 1:
			return nil, errors.New("bucket unreachable")
		case 2:
			return io.NopCloser(&failingReader{data: raw, failAt: 200, err: errors.New("reset")}), nil
		}
		return io.NopCloser(bytes.NewReader(raw)), nil
	}
	for i, want := range []string{"bucket unreachable", "reset", ""} {
		th, err := c.Open(context.Background(), "a.jpg", "image/jpeg", Spec{Width: 10, Height: 10}, flaky)
		if want == "" {
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			th.File.Close()
			continue
		}
		if err == nil || errors.Is(err, ErrNotThumbnailable) || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Fatalf("request %d: err = %v, want %q", i, err, want)
		}
	}
}

// TestCacheCallerGivesUp: a caller whose context ends stops waiting; the
// generation goes on and the next request finds the thumbnail.
func TestCacheCallerGivesUp(t *testing.T) {
	c, dir := newCache(t)
	src := &source{data: encodeAs(t, PNG, photo(300, 200)), gate: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Open(ctx, "a.png", "image/png", Spec{Width: 50, Height: 50}, src.Open); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	close(src.gate)
	deadline := time.Now().Add(10 * time.Second)
	for countFiles(t, dir) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	th, err := c.Open(context.Background(), "a.png", "image/png", Spec{Width: 50, Height: 50}, src.Open)
	if err != nil {
		t.Fatal(err)
	}
	th.File.Close()
	if src.opens.Load() != 1 {
		t.Errorf("source opened %d times, want 1", src.opens.Load())
	}
}

// TestCacheDamagedFileRegenerated: a cached file that is not an image
// (damaged outside the process) is made again, and nothing half-written
// is left in the temporary directory.
func TestCacheDamagedFileRegenerated(t *testing.T) {
	c, dir := newCache(t)
	src := &source{data: encodeAs(t, PNG, photo(300, 200))}
	spec := Spec{Width: 50, Height: 50}
	th, err := c.Open(context.Background(), "a.png", "image/png", spec, src.Open)
	if err != nil {
		t.Fatal(err)
	}
	th.File.Close()
	if err := os.WriteFile(th.File.Name(), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	th, err = c.Open(context.Background(), "a.png", "image/png", spec, src.Open)
	if err != nil {
		t.Fatal(err)
	}
	if d := decodeOutput(t, readAll(t, th)); d.format != PNG || c.Generations() != 2 {
		t.Errorf("format %s, generations %d", d.format, c.Generations())
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".tmp")); len(entries) != 0 {
		t.Errorf("left in .tmp: %v", entries)
	}
}

// countFiles counts the cached files (thumbnails and refusals).
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".tmp" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCacheOneAVIFAtATime: AVIF generations (the memory-hungry decoder)
// run one at a time even when other slots are free; other formats run
// beside one.
func TestCacheOneAVIFAtATime(t *testing.T) {
	c, _ := newCache(t) // two slots
	raw := encodeAs(t, AVIF, photo(64, 48))
	gate := make(chan struct{})
	var opened atomic.Int32
	openAVIF := func(context.Context) (io.ReadCloser, error) {
		opened.Add(1)
		return io.NopCloser(&gated{r: bytes.NewReader(raw), gate: gate}), nil
	}
	var wg sync.WaitGroup
	for _, name := range []string{"a.avif", "b.avif"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th, err := c.Open(context.Background(), name, "image/avif", Spec{Width: 16, Height: 16}, openAVIF)
			if err != nil {
				t.Error(err)
				return
			}
			th.File.Close()
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for opened.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// A PNG goes through the free slot meanwhile.
	png := &source{data: encodeAs(t, PNG, photo(64, 48))}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	th, err := c.Open(ctx, "c.png", "image/png", Spec{Width: 16, Height: 16}, png.Open)
	if err != nil {
		t.Errorf("PNG beside an AVIF: %v", err)
	} else {
		th.File.Close()
	}
	if got := opened.Load(); got != 1 {
		t.Errorf("%d AVIF sources open at once, want 1", got)
	}
	close(gate)
	wg.Wait()
	if got := opened.Load(); got != 2 {
		t.Errorf("%d AVIF sources opened in all, want 2", got)
	}
}
