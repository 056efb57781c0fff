package thumb

import (
	"bytes"
	"image/color"
	"io"
	"testing"
)

// BenchmarkGenerate: one thumbnail of a 1920x1080 (2.07 MP) source per
// format, into a 400x400 box (contain: 400x225) and a 100x100 cover; the
// animated GIF is 16 frames of 480x270 (2.07 MP over all frames). The
// first call of each WebAssembly codec (compiling it) is made before the
// timer starts: `go test -run '^$' -bench Generate -benchmem`.
func BenchmarkGenerate(b *testing.B) {
	src := photo(1920, 1080)
	sources := []struct {
		name string
		mime string
		raw  []byte
	}{
		{"JPEG", "image/jpeg", encodeAs(b, JPEG, src)},
		{"PNG", "image/png", encodeAs(b, PNG, src)},
		{"GIF", "image/gif", encodeAs(b, GIF, src)},
		{"GIF-animated", "image/gif", animatedGIF(b, 480, 270, 16, []color.Color{red, green, blue})},
		{"WebP", "image/webp", encodeAs(b, WebP, src)},
		{"WebP-lossless", "image/webp", losslessWebP(b, src)},
		{"AVIF", "image/avif", encodeAs(b, AVIF, src)},
	}
	for _, s := range sources {
		for _, spec := range []Spec{{Width: 400, Height: 400}, {Width: 100, Height: 100, Fit: Cover}} {
			b.Run(s.name+"/"+spec.String(), func(b *testing.B) {
				if _, err := Generate(io.Discard, bytes.NewReader(s.raw), s.mime, spec); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(s.raw)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := Generate(io.Discard, bytes.NewReader(s.raw), s.mime, spec); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
