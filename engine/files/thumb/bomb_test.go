package thumb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestDecompressionBombRefused: files of a few dozen bytes whose headers
// claim billions of pixels are refused from the header alone: fast, and
// allocating a few megabytes at most where decoding would need tens of
// gigabytes (100000 × 100000 RGBA is 40 GB).
func TestDecompressionBombRefused(t *testing.T) {
	avifBomb := avifWithSize(t, encodeAs(t, AVIF, photo(16, 16)), 100000, 100000)
	// The AVIF decoder (WebAssembly) is compiled on first use: do that
	// outside the measurement.
	if _, _, err := generate(t, encodeAs(t, AVIF, photo(16, 16)), "image/avif", Spec{Width: 8, Height: 8}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		raw  []byte
		mime string
	}{
		{"png 100000x100000", pngBomb(100000, 100000), "image/png"},
		{"png 6400x6400 (41 MP)", pngBomb(6400, 6400), "image/png"},
		{"jpeg 65535x65535", jpegBomb(65535, 65535), "image/jpeg"},
		{"gif 65535x65535", gifBomb(65535, 65535), "image/gif"},
		{"webp 16777216x16777216", webpBomb(1<<24, 1<<24), "image/webp"},
		{"webp 16384x16384", webpBomb(16384, 16384), "image/webp"},
		{"avif 100000x100000", avifBomb, "image/avif"},
		{"avif 7000x7000", avifWithSize(t, encodeAs(t, AVIF, photo(16, 16)), 7000, 7000), "image/avif"},
	}
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, _, err := generate(t, c.raw, c.mime, Spec{Width: 100, Height: 100})
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrNotThumbnailable) {
			t.Errorf("%s (%d bytes): err = %v, want ErrNotThumbnailable", c.name, len(c.raw), err)
			continue
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s (%d bytes): refused in %v, %d KB allocated: %v", c.name, len(c.raw), took, alloc>>10, err)
		if alloc > 16<<20 {
			t.Errorf("%s: %d MB allocated to refuse it", c.name, alloc>>20)
		}
		if took > 2*time.Second {
			t.Errorf("%s: took %v to refuse", c.name, took)
		}
	}
}

// avifWithSize rewrites the image-spatial-extents ('ispe') box of an
// AVIF to claim w × h.
func avifWithSize(t *testing.T, raw []byte, w, h uint32) []byte {
	t.Helper()
	i := bytes.Index(raw, []byte("ispe"))
	if i < 0 {
		t.Fatal("no ispe box in the test AVIF")
	}
	out := append([]byte{}, raw...)
	binary.BigEndian.PutUint32(out[i+8:], w)
	binary.BigEndian.PutUint32(out[i+12:], h)
	return out
}
