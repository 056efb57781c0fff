package thumb

import (
	"bytes"
	"image/color"
	"io"
	"testing"
)

// BenchmarkGenerate: the time of one thumbnail (decode, resize, encode)
// of a 1920x1080 (2.07 MP) source per format, for a 100x100 and a 640x480
// box, each fitted both ways (crop is cover): contain gives 100x56 and
// 640x360, cover the box. The animated GIF is 16 frames of 480x270
// (2.07 MP over all frames). Sources are encoded in memory once, outside
// the timer, and the first call of each WebAssembly codec (compiling it)
// is made before the timer starts. Besides ns/op it reports ms/op:
// `go test -run '^$' -bench Generate -benchmem ./engine/files/thumb`
// (`make bench-files` runs it with -benchtime 5x).
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
	var specs []Spec
	for _, box := range [][2]int{{100, 100}, {640, 480}} {
		for _, fit := range []Fit{Contain, Cover} {
			specs = append(specs, Spec{Width: box[0], Height: box[1], Fit: fit})
		}
	}
	for _, s := range sources {
		for _, spec := range specs {
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
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
			})
		}
	}
}
