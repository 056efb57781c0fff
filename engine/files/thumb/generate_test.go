package thumb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"testing"

	gwebp "github.com/gen2brain/webp"
)

// TestGenerateFormatsAndFits: for every format and fit mode, the output
// decodes, is in the format SPEC.md says and has the size the fit says.
// The source is 300x200 (3:2).
func TestGenerateFormatsAndFits(t *testing.T) {
	src := photo(300, 200)
	cases := []struct {
		thumb, fit string
		w, h       int
	}{
		{"100x100", "", 100, 66},            // contain (default): inside the box, aspect kept
		{"100x100_contain", "", 100, 66},    //
		{"100x100", "contain", 100, 66},     //
		{"50x100", "", 50, 33},              // the narrow side of the box decides
		{"100x100_cover", "", 100, 100},     // cover: exactly the box, cropped
		{"100x100_crop", "", 100, 100},      // crop = cover
		{"100x100", "cover", 100, 100},      //
		{"120x40", "crop", 120, 40},         //
		{"600x600", "", 300, 200},           // contain never enlarges
		{"600x400_cover", "", 600, 400},     // cover enlarges to fill the box
		{"9999x9999_contain", "", 300, 200}, // clamped to 4096, still not enlarged
		{"0x100", "", 150, 100},             // PocketBase's 0xH: the width follows
		{"60x0_cover", "", 60, 40},          // Wx0: the height follows, whatever the fit
		{"0x400", "", 600, 400},             // and it enlarges
	}
	for _, f := range []Format{PNG, JPEG, GIF, WebP, AVIF} {
		raw := encodeAs(t, f, src)
		want := f
		if f == GIF {
			want = PNG // a single frame comes back as a PNG
		}
		for _, c := range cases {
			if f == AVIF && (c.thumb == "600x400_cover" || c.thumb == "0x400") {
				continue // the slowest encoder; enlarging is the same code for every format
			}
			s, ok := ParseSpec(c.thumb, c.fit)
			if !ok {
				t.Fatalf("ParseSpec(%q, %q) refused", c.thumb, c.fit)
			}
			out, got, err := generate(t, raw, f.MIME(), s)
			if err != nil {
				t.Fatalf("%s %s: %v", f, s, err)
			}
			d := decodeOutput(t, out)
			if got != want || d.format != want {
				t.Errorf("%s %s: returned %s, bytes are %s; want %s", f, s, got, d.format, want)
			}
			if d.width != c.w || d.height != c.h {
				t.Errorf("%s thumb=%s fit=%s: %dx%d, want %dx%d", f, c.thumb, c.fit, d.width, d.height, c.w, c.h)
			}
		}
	}
}

// TestGenerateCoverCropsAroundCentre: the disc in the middle of the
// source fills the middle of a cover thumbnail, and a contain thumbnail
// keeps the source's corners (red grows left to right).
func TestGenerateCoverCropsAroundCentre(t *testing.T) {
	raw := encodeAs(t, PNG, photo(300, 200))
	out, _, err := generate(t, raw, "image/png", Spec{Width: 40, Height: 40, Fit: Cover})
	if err != nil {
		t.Fatal(err)
	}
	d := decodeOutput(t, out)
	if r, g, b, _ := d.img.At(20, 20).RGBA(); r>>8 < 200 || g>>8 < 160 || b>>8 > 90 {
		t.Errorf("centre of the cover thumbnail is %v, want the disc's yellow", d.img.At(20, 20))
	}
	out, _, err = generate(t, raw, "image/png", Spec{Width: 150, Height: 150})
	if err != nil {
		t.Fatal(err)
	}
	d = decodeOutput(t, out)
	left, _, _, _ := d.img.At(1, 1).RGBA()
	right, _, _, _ := d.img.At(d.width-2, 1).RGBA()
	if left>>8 > 20 || right>>8 < 230 {
		t.Errorf("contain thumbnail lost the source's edges: red %d at left, %d at right", left>>8, right>>8)
	}
}

// TestGenerateKeepsAlpha: a transparent PNG, WebP and AVIF stay
// transparent where the source was.
func TestGenerateKeepsAlpha(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 200, 100))
	for y := 0; y < 100; y++ {
		for x := 100; x < 200; x++ { // right half opaque blue, left half clear
			src.SetNRGBA(x, y, color.NRGBA{0, 0, 255, 255})
		}
	}
	for _, f := range []Format{PNG, WebP, AVIF} {
		raw := encodeAs(t, f, src)
		out, _, err := generate(t, raw, f.MIME(), Spec{Width: 50, Height: 50})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		d := decodeOutput(t, out)
		if _, _, _, a := d.img.At(5, 12).RGBA(); a != 0 {
			t.Errorf("%s: left half alpha %d, want 0", f, a>>8)
		}
		if _, _, b, a := d.img.At(45, 12).RGBA(); a>>8 < 250 || b>>8 < 200 {
			t.Errorf("%s: right half is %v, want opaque blue", f, d.img.At(45, 12))
		}
	}
}

// TestGenerateWebPLosslessStaysLossless: a lossless WebP source gives a
// lossless thumbnail (VP8L), a lossy one a lossy thumbnail (VP8).
func TestGenerateWebPLosslessStaysLossless(t *testing.T) {
	src := photo(120, 80)
	for _, c := range []struct {
		raw  []byte
		want string
	}{{losslessWebP(t, src), "VP8L"}, {encodeAs(t, WebP, src), "VP8 "}} {
		out, _, err := generate(t, c.raw, "image/webp", Spec{Width: 60, Height: 60})
		if err != nil {
			t.Fatal(err)
		}
		if chunk := webpChunk(out); chunk != c.want {
			t.Errorf("source %s: thumbnail chunk %q, want %q", webpChunk(c.raw), chunk, c.want)
		}
	}
}

// TestGenerateWebPColours: a lossy WebP's colours survive decoding and
// the thumbnail (VP8's limited range read as such, not as JPEG's full
// range: black stays black, white stays white).
func TestGenerateWebPColours(t *testing.T) {
	for _, c := range []color.NRGBA{{0, 0, 0, 255}, {255, 255, 255, 255}, {128, 128, 128, 255}, {200, 30, 30, 255}, {20, 90, 220, 255}} {
		src := image.NewNRGBA(image.Rect(0, 0, 64, 64))
		draw.Draw(src, src.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
		raw := encodeAs(t, WebP, src)
		out, _, err := generate(t, raw, "image/webp", Spec{Width: 16, Height: 16})
		if err != nil {
			t.Fatal(err)
		}
		got := color.NRGBAModel.Convert(decodeOutput(t, out).img.At(8, 8)).(color.NRGBA)
		if !near(got, c, 4) {
			t.Errorf("WebP of %v: thumbnail shows %v", c, got)
		}
	}
}

func near(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// TestGenerateJPEGOrientation: a JPEG whose EXIF says "rotate 90°" (a
// phone held upright) gives an upright thumbnail.
func TestGenerateJPEGOrientation(t *testing.T) {
	raw := withOrientation(encodeAs(t, JPEG, photo(300, 200)), 6)
	out, _, err := generate(t, raw, "image/jpeg", Spec{Width: 100, Height: 100})
	if err != nil {
		t.Fatal(err)
	}
	if d := decodeOutput(t, out); d.width != 66 || d.height != 100 {
		t.Errorf("thumbnail of a rotated 300x200 JPEG is %dx%d, want 66x100", d.width, d.height)
	}
}

// TestGenerateRefusals: what is served as it is, each an
// ErrNotThumbnailable that says why.
func TestGenerateRefusals(t *testing.T) {
	png1 := encodeAs(t, PNG, photo(20, 20))
	seq := encodeAs(t, AVIF, photo(16, 16))
	copy(seq[8:12], "avis")
	cases := []struct {
		name string
		raw  []byte
		mime string
		why  string
	}{
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), "image/svg+xml", "not a format"},
		{"pdf", []byte("%PDF-1.4"), "application/pdf", "not a format"},
		{"png named jpeg", png1, "image/jpeg", "content is PNG, not JPEG"},
		{"text named png", []byte("hello, world, not a picture at all"), "image/png", "content is unknown"},
		{"empty", nil, "image/png", "content is unknown"},
		{"truncated png", png1[:60], "image/png", "PNG: "},
		{"animated webp", animatedWebP(t), "image/webp", "animated WebP"},
		{"avif sequence", seq, "image/avif", "AVIF image sequence"},
		{"apng", apng(t), "image/png", "animated PNG"},
	}
	for _, c := range cases {
		_, _, err := generate(t, c.raw, c.mime, Spec{Width: 10, Height: 10})
		if !errors.Is(err, ErrNotThumbnailable) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: err = %v, want ErrNotThumbnailable saying %q", c.name, err, c.why)
		}
	}
}

// animatedWebP is a two-frame animated WebP (VP8X, ANIM, two ANMF
// frames of a 16x16 lossless image); the reference decoder agrees.
func animatedWebP(t *testing.T) []byte {
	t.Helper()
	still := losslessWebP(t, photo(16, 16))
	frame := still[12:] // the VP8L chunk, padded
	chunk := func(fourcc string, data []byte) []byte {
		b := append([]byte(fourcc), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
		b = append(b, data...)
		if len(data)%2 == 1 {
			b = append(b, 0)
		}
		return b
	}
	u24 := func(v int) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16)} }
	body := []byte("WEBP")
	body = append(body, chunk("VP8X", append(append([]byte{0x02 | 0x10, 0, 0, 0}, u24(15)...), u24(15)...))...)
	body = append(body, chunk("ANIM", []byte{0, 0, 0, 0, 0, 0})...)
	for i := 0; i < 2; i++ {
		anmf := append(append(append(append(u24(0), u24(0)...), u24(15)...), u24(15)...), u24(100)...)
		anmf = append(anmf, 0)
		body = append(body, chunk("ANMF", append(anmf, frame...))...)
	}
	raw := append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
	if all, err := gwebp.DecodeAll(bytes.NewReader(raw)); err != nil || len(all.Image) != 2 {
		t.Fatalf("test animation does not decode as two frames: %v", err)
	}
	return raw
}

// TestGenerateOver40Megapixels: a real 8000x5001 image (40.008 MP) is
// served as it is; the refusal reads the header only.
func TestGenerateOver40Megapixels(t *testing.T) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, image.NewGray(image.Rect(0, 0, 8000, 5001))); err != nil {
		t.Fatal(err)
	}
	_, _, err := generate(t, b.Bytes(), "image/png", Spec{Width: 100, Height: 100})
	if !errors.Is(err, ErrNotThumbnailable) {
		t.Fatalf("err = %v, want ErrNotThumbnailable", err)
	}
	t.Log(err)
	if err := checkPixels(8000, 5000, 1); err != nil {
		t.Errorf("exactly 40 MP refused: %v", err)
	}
	if err := checkPixels(40001, 1000, 1); err == nil {
		t.Errorf("40.000001 MP accepted")
	}
}

// TestGenerateSourceReadError: a source that fails to read is an I/O
// error, not a verdict on the content (it must not be cached as one).
func TestGenerateSourceReadError(t *testing.T) {
	raw := encodeAs(t, JPEG, photo(300, 200))
	boom := errors.New("connection reset")
	r := &failingReader{data: raw, failAt: len(raw) / 2, err: boom}
	_, err := Generate(&bytes.Buffer{}, r, "image/jpeg", Spec{Width: 10, Height: 10})
	if !errors.Is(err, boom) || errors.Is(err, ErrNotThumbnailable) {
		t.Fatalf("err = %v, want the read error and not ErrNotThumbnailable", err)
	}
}

type failingReader struct {
	data   []byte
	off    int
	failAt int
	err    error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.off >= r.failAt {
		return 0, r.err
	}
	n := copy(p, r.data[r.off:r.failAt])
	r.off += n
	return n, nil
}

// losslessWebP encodes img as a lossless (VP8L) WebP.
func losslessWebP(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := encodeWebPLossless(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpChunk is the first chunk's FourCC after the RIFF header.
func webpChunk(b []byte) string {
	if len(b) < 16 {
		return ""
	}
	return string(b[12:16])
}

// withOrientation inserts an EXIF APP1 segment with the given
// orientation after a JPEG's SOI.
func withOrientation(jpg []byte, orientation uint16) []byte {
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08")
	tiff = append(tiff, 0, 1)                               // one IFD entry
	tiff = append(tiff, 0x01, 0x12, 0, 3, 0, 0, 0, 1)       // Orientation, SHORT, 1
	tiff = binary.BigEndian.AppendUint16(tiff, orientation) //
	tiff = append(tiff, 0, 0, 0, 0, 0, 0)                   // padding, no next IFD
	app1 := append([]byte("Exif\x00\x00"), tiff...)
	seg := []byte{0xff, 0xe1}
	seg = binary.BigEndian.AppendUint16(seg, uint16(len(app1)+2))
	seg = append(seg, app1...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// apng is a PNG with an acTL chunk before its image data.
func apng(t *testing.T) []byte {
	t.Helper()
	raw := encodeAs(t, PNG, photo(16, 16))
	ihdrEnd := 8 + 8 + 13 + 4
	actl := pngChunk("acTL", []byte{0, 0, 0, 2, 0, 0, 0, 0})
	out := append([]byte{}, raw[:ihdrEnd]...)
	out = append(out, actl...)
	return append(out, raw[ihdrEnd:]...)
}

// TestProportionalClamped: a keep-the-proportion size never exceeds
// MaxDimension on the side that follows, however thin the source.
func TestProportionalClamped(t *testing.T) {
	for _, c := range []struct {
		srcW, srcH int
		s          Spec
		w, h       int
	}{
		{10000, 1, Spec{Height: 4096}, MaxDimension, 4096},
		{1, 10000, Spec{Width: 100}, 100, MaxDimension},
		{3, 1000, Spec{Height: 10}, 1, 10},
		{300, 200, Spec{Height: 100}, 150, 100},
	} {
		if w, h := proportional(c.srcW, c.srcH, c.s); w != c.w || h != c.h {
			t.Errorf("proportional(%d, %d, %v) = %dx%d, want %dx%d", c.srcW, c.srcH, c.s, w, h, c.w, c.h)
		}
	}
}
