package thumb

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// specOracle is SPEC.md's thumb syntax as a regular expression.
var specOracle = regexp.MustCompile(`^([0-9]+)x([0-9]+)(?:_(contain|cover|crop))?$`)

// oracleDim is a dimension as the oracle reads it: the number clamped to
// MaxDimension, 0 for zero.
func oracleDim(digits string) int {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 4 {
		return MaxDimension
	}
	n, _ := strconv.Atoi("0" + digits)
	return min(n, MaxDimension)
}

// FuzzParseSpec: ParseSpec never panics, agrees with a regular
// expression of the syntax on every input, returns sizes within 0-4096
// (one of them 0: keep the proportion), and its canonical form parses
// back to the same spec.
func FuzzParseSpec(f *testing.F) {
	for _, s := range [][2]string{
		{"100x100", ""}, {"100x80_cover", ""}, {"0x10", ""}, {"-1x5", ""}, {"99999x1_crop", ""},
		{"10x10", "contain"}, {"10x10_cover", "cover"}, {"", "crop"}, {"10x10", "fill"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, thumb, fit string) {
		s, ok := ParseSpec(thumb, fit)
		want, wantOK := Spec{}, false
		if m := specOracle.FindStringSubmatch(thumb); m != nil {
			want = Spec{Width: oracleDim(m[1]), Height: oracleDim(m[2])}
			name := m[3]
			wantOK = want.Width > 0 || want.Height > 0 // one zero keeps the proportion
			switch {
			case name != "" && fit != "":
				wantOK = false
			case fit != "":
				name = fit
			}
			switch name {
			case "", "contain":
			case "cover", "crop":
				want.Fit = Cover
			default:
				wantOK = false
			}
		}
		if ok != wantOK || (ok && s != want) {
			t.Fatalf("ParseSpec(%q, %q) = %+v, %v; the syntax says %+v, %v", thumb, fit, s, ok, want, wantOK)
		}
		if !ok {
			return
		}
		if s.Width < 0 || s.Width > MaxDimension || s.Height < 0 || s.Height > MaxDimension || s.Width+s.Height == 0 {
			t.Fatalf("ParseSpec(%q, %q) = %+v: out of range", thumb, fit, s)
		}
		if back, ok := ParseSpec(s.String(), ""); !ok || back != s {
			t.Fatalf("%q parses to %+v, %v; want %+v", s.String(), back, ok, s)
		}
	})
}

// FuzzGenerate feeds small inputs of every format to the decode path:
// no panic escapes (a decoder's is a refusal), an error is a refusal
// (the reader never fails), and an image that comes out decodes, in the
// format the generator named, within the requested box (exactly the box
// for Cover).
func FuzzGenerate(f *testing.F) {
	small := photo(24, 16)
	anim := animatedGIF(f, 12, 8, 3, []color.Color{red, green, blue})
	for _, seed := range []struct {
		raw  []byte
		mime uint8
	}{
		{encodeAs(f, PNG, small), 0}, {encodeAs(f, JPEG, small), 1}, {encodeAs(f, GIF, small), 2},
		{anim, 2}, {encodeAs(f, WebP, small), 3}, {encodeAs(f, AVIF, small), 4},
		{pngBomb(100000, 100000), 0}, {jpegBomb(60000, 60000), 1}, {gifBomb(65535, 65535), 2}, {webpBomb(16384, 16384), 3},
	} {
		f.Add(seed.raw, seed.mime, uint8(8), uint8(8), false)
		f.Add(seed.raw, seed.mime, uint8(30), uint8(5), true)
	}
	mimes := []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"}
	f.Fuzz(func(t *testing.T, raw []byte, mime, w, h uint8, cover bool) {
		if len(raw) > 16<<10 {
			return
		}
		s := Spec{Width: int(w%64) + 1, Height: int(h%64) + 1}
		if cover {
			s.Fit = Cover
		}
		var out bytes.Buffer
		format, err := Generate(&out, bytes.NewReader(raw), mimes[int(mime)%len(mimes)], s)
		if err != nil {
			if !errors.Is(err, ErrNotThumbnailable) {
				t.Fatalf("error that is not a refusal: %v", err)
			}
			return
		}
		d := decodeOutput(t, out.Bytes())
		if d.format != format {
			t.Fatalf("generator says %s, bytes are %s", format, d.format)
		}
		box := image.Rect(0, 0, s.Width, s.Height)
		if got := image.Rect(0, 0, d.width, d.height); got.Empty() || !got.In(box) || (cover && got != box) {
			t.Fatalf("%s thumbnail %v for %s", format, got, s)
		}
	})
}
