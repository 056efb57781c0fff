package thumb

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultConcurrency is how many thumbnails a Cache generates at once
// when NewCache is given no number: decoding a 40-megapixel source takes
// about 160 MB and a core for a second or more.
const DefaultConcurrency = 2

// Cache keeps generated thumbnails on local disk, under one directory,
// even when the sources live in S3 (SPEC.md). A variant is generated once
// however many requests ask for it at the same time: one generation per
// variant runs, the others wait for it (singleflight). A refusal
// (ErrNotThumbnailable) is cached too, so a source over MaxPixels is not
// read again for every request that asks for its thumbnail.
//
// Layout: <dir>/<h[:2]>/<h>/<spec> for the thumbnail of the source whose
// name hashes (SHA-256, hex) to h, <spec>.none for a refusal (its text
// says why), <dir>/.tmp for files being written. A file appears under its
// name whole, or not at all: written in .tmp, fsynced, renamed.
type Cache struct {
	dir   string
	tmp   string
	slots chan struct{}
	heavy chan struct{} // one AVIF at a time (see NewCache)
	group singleflight.Group
	made  atomic.Uint64

	mu     sync.Mutex
	active map[string]*sourceState // by source directory: generations in flight
}

// sourceState counts a source's generations in flight and its deletions
// since, so a generation that finishes after DeleteSource drops its file.
type sourceState struct {
	running int
	deletes uint64
}

// Source opens the original file. It is called at most once per
// generation, only on a cache miss.
type Source func(ctx context.Context) (io.ReadCloser, error)

// Thumbnail is a cached thumbnail, open for reading; the caller closes
// File. File stays readable when the variant is deleted meanwhile.
type Thumbnail struct {
	File    *os.File
	Format  Format
	Size    int64
	ModTime time.Time
}

// MIME is the thumbnail's media type (a single-frame GIF's is image/png).
func (t *Thumbnail) MIME() string { return t.Format.MIME() }

// ErrSourceDeleted: the source was deleted (DeleteSource) while its
// thumbnail was being generated; nothing was kept. It wraps
// fs.ErrNotExist.
var ErrSourceDeleted = fmt.Errorf("thumb: source deleted while its thumbnail was generated: %w", fs.ErrNotExist)

// NewCache keeps thumbnails under dir (created if missing), generating at
// most concurrency of them at once (DefaultConcurrency when < 1), and of
// those at most one from an AVIF source: its WebAssembly decoder needs
// about 70 bytes a pixel at its peak (0.8 GB for a 12-megapixel photo,
// about 2.7 GB at the 40-megapixel limit). Files an interrupted process
// left half-written are removed.
func NewCache(dir string, concurrency int) (*Cache, error) {
	if concurrency < 1 {
		concurrency = DefaultConcurrency
	}
	c := &Cache{
		dir:    dir,
		tmp:    filepath.Join(dir, ".tmp"),
		slots:  make(chan struct{}, concurrency),
		heavy:  make(chan struct{}, 1),
		active: map[string]*sourceState{},
	}
	if err := os.MkdirAll(c.tmp, 0o755); err != nil {
		return nil, fmt.Errorf("thumbnail cache: %w", err)
	}
	c.sweepTmp(time.Hour)
	return c, nil
}

// Generations is how many thumbnails (and refusals) this cache has
// generated: misses that read a source.
func (c *Cache) Generations() uint64 { return c.made.Load() }

// Open returns the thumbnail s of the source named source (any string
// that names the file for good, such as collection/record/filename),
// whose media type is mime, generating it from open on a miss. A refusal
// wraps ErrNotThumbnailable: the caller serves the original. ctx bounds
// this caller's wait; a generation that started goes on for the others
// and for the cache.
func (c *Cache) Open(ctx context.Context, source, mime string, s Spec, open Source) (*Thumbnail, error) {
	if !Supported(mime) {
		return nil, refuse("%q is not a format thumbnails are made of", mime)
	}
	dir := c.sourceDir(source)
	path := filepath.Join(dir, s.String())
	if t, err := c.openCached(path); !errors.Is(err, fs.ErrNotExist) {
		return t, err
	}
	gen := context.WithoutCancel(ctx)
	ch := c.group.DoChan(path, func() (any, error) {
		return nil, c.generate(gen, dir, path, mime, s, open)
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
	}
	return c.openCached(path)
}

// DeleteSource removes every thumbnail of source, and makes a generation
// of one that is in flight drop its result. Deleting a source that has
// none is not an error.
func (c *Cache) DeleteSource(source string) error {
	dir := c.sourceDir(source)
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.active[dir]; st != nil {
		st.deletes++
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("delete thumbnails: %w", err)
	}
	return nil
}

// sourceDir is where the variants of source live.
func (c *Cache) sourceDir(source string) string {
	sum := sha256.Sum256([]byte(source))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(c.dir, h[:2], h)
}

// openCached opens a cached variant: fs.ErrNotExist on a miss, the cached
// refusal when there is one.
func (c *Cache) openCached(path string) (*Thumbnail, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if why, rerr := os.ReadFile(path + ".none"); rerr == nil {
			return nil, refuse("%s", why)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	head := make([]byte, SniffLen)
	n, _ := f.ReadAt(head, 0)
	format := DetectFormat(head[:n])
	if format == Unknown {
		// Not one of ours (damaged outside the process): made again.
		f.Close()
		os.Remove(path)
		return nil, fs.ErrNotExist
	}
	return &Thumbnail{File: f, Format: format, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// generate makes the variant at path from the source, once a generation
// slot is free, and publishes it (or the refusal) under its name.
func (c *Cache) generate(ctx context.Context, dir, path, mime string, s Spec, open Source) error {
	if FormatOf(mime) == AVIF {
		c.heavy <- struct{}{}
		defer func() { <-c.heavy }()
	}
	c.slots <- struct{}{}
	defer func() { <-c.slots }()
	// A flight that ended between the caller's miss and this one's start
	// already made it.
	if t, err := c.openCached(path); !errors.Is(err, fs.ErrNotExist) {
		if t != nil {
			t.File.Close()
		}
		return err
	}
	deletes := c.begin(dir)
	defer c.end(dir)
	c.made.Add(1)

	rc, err := open(ctx)
	if err != nil {
		return fmt.Errorf("open source: %w", err)
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(c.tmp, "gen-*")
	if err != nil {
		return fmt.Errorf("thumbnail cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing there
	defer tmp.Close()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	_, gerr := Generate(bw, rc, mime, s)
	switch {
	case errors.Is(gerr, ErrNotThumbnailable):
		// Remember why, in place of the thumbnail.
		why := strings.TrimPrefix(gerr.Error(), ErrNotThumbnailable.Error()+": ")
		if err := c.writeMarker(dir, path+".none", why, deletes); err != nil {
			return err
		}
		return gerr
	case gerr != nil:
		return gerr
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("thumbnail cache: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("thumbnail cache: %w", err)
	}
	return c.publish(dir, tmp.Name(), path, deletes)
}

// writeMarker publishes a refusal's reason at path.
func (c *Cache) writeMarker(dir, path, why string, deletes uint64) error {
	tmp, err := os.CreateTemp(c.tmp, "none-*")
	if err != nil {
		return fmt.Errorf("thumbnail cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(why)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("thumbnail cache: %w", err)
	}
	return c.publish(dir, tmp.Name(), path, deletes)
}

// publish renames a finished file to its name, unless the source was
// deleted since its generation began.
func (c *Cache) publish(dir, tmp, path string, deletes uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active[dir].deletes != deletes {
		return ErrSourceDeleted
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("thumbnail cache: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("thumbnail cache: %w", err)
	}
	return nil
}

// begin registers a generation for the source at dir and returns the
// source's deletions so far.
func (c *Cache) begin(dir string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.active[dir]
	if st == nil {
		st = &sourceState{}
		c.active[dir] = st
	}
	st.running++
	return st.deletes
}

// end unregisters it; the state goes with the source's last generation.
func (c *Cache) end(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.active[dir]; st != nil {
		if st.running--; st.running == 0 {
			delete(c.active, dir)
		}
	}
}

// sweepTmp removes files in .tmp older than age: what a crash left.
func (c *Cache) sweepTmp(age time.Duration) {
	entries, err := os.ReadDir(c.tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			os.Remove(filepath.Join(c.tmp, e.Name()))
		}
	}
}
