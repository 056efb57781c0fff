package thumb

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"testing"

	"github.com/gen2brain/avif"
	gwebp "github.com/gen2brain/webp"
	xwebp "golang.org/x/image/webp"
)

// photo is a w × h test picture: smooth gradients, a disc and some
// texture, so the encoders have real work and a crop shows.
func photo(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cx, cy, r := w/2, h/2, min(w, h)/3
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBA{uint8(255 * x / w), uint8(255 * y / h), uint8((x*7 + y*13) % 256), 255}
			if dx, dy := x-cx, y-cy; dx*dx+dy*dy < r*r {
				c = color.NRGBA{240, 200, 40, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// encodeAs encodes img in format f, as a user would have uploaded it.
func encodeAs(t testing.TB, f Format, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch f {
	case PNG:
		err = png.Encode(&b, img)
	case JPEG:
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
	case GIF:
		err = gif.Encode(&b, img, &gif.Options{NumColors: 256})
	case WebP:
		err = gwebp.Encode(&b, img, gwebp.Options{Quality: 90})
	case AVIF:
		err = avif.Encode(&b, img, avif.Options{Quality: 80, Speed: 10, ChromaSubsampling: image.YCbCrSubsampleRatio420})
	default:
		t.Fatalf("encodeAs %v", f)
	}
	if err != nil {
		t.Fatalf("encode %s: %v", f, err)
	}
	return b.Bytes()
}

// encodeWebPLossless writes img as a lossless (VP8L) WebP.
func encodeWebPLossless(w io.Writer, img image.Image) error {
	return gwebp.Encode(w, img, gwebp.Options{Lossless: true})
}

// decoded is what a thumbnail's bytes say about themselves.
type decoded struct {
	format        Format
	width, height int
	frames        int
	img           image.Image // the first frame
	gif           *gif.GIF
}

// decodeOutput decodes a thumbnail with the standard decoders of its
// format, named by its own magic bytes.
func decodeOutput(t testing.TB, b []byte) decoded {
	t.Helper()
	d := decoded{format: DetectFormat(b), frames: 1}
	var err error
	switch d.format {
	case PNG:
		d.img, err = png.Decode(bytes.NewReader(b))
	case JPEG:
		d.img, err = jpeg.Decode(bytes.NewReader(b))
	case GIF:
		d.gif, err = gif.DecodeAll(bytes.NewReader(b))
		if err == nil {
			d.img, d.frames = d.gif.Image[0], len(d.gif.Image)
			d.width, d.height = d.gif.Config.Width, d.gif.Config.Height
			return d
		}
	case WebP:
		d.img, err = xwebp.Decode(bytes.NewReader(b))
		d.img = webpRGB(d.img) // as a browser shows it (see webpRGB)
	case AVIF:
		d.img, err = avif.Decode(bytes.NewReader(b))
	default:
		t.Fatalf("output is no known format: % x", b[:min(len(b), 16)])
	}
	if err != nil {
		t.Fatalf("decode %s output: %v", d.format, err)
	}
	d.width, d.height = d.img.Bounds().Dx(), d.img.Bounds().Dy()
	return d
}

// generate runs Generate into memory.
func generate(t testing.TB, src []byte, mime string, s Spec) ([]byte, Format, error) {
	t.Helper()
	var out bytes.Buffer
	f, err := Generate(&out, bytes.NewReader(src), mime, s)
	return out.Bytes(), f, err
}

// pngChunk is one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(append([]byte(typ), data...)))
}

// pngBomb is a valid-looking PNG of a few dozen bytes whose header claims
// w × h pixels of RGBA.
func pngBomb(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0) // 8 bits, RGBA, deflate, no filter, no interlace
	b := []byte("\x89PNG\r\n\x1a\n")
	b = append(b, pngChunk("IHDR", ihdr)...)
	b = append(b, pngChunk("IDAT", []byte{0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01})...)
	return append(b, pngChunk("IEND", nil)...)
}

// jpegBomb is a JFIF JPEG whose baseline frame header (SOF0) claims
// w × h, followed by a scan header and a few bytes of data.
func jpegBomb(w, h uint16) []byte {
	b := []byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0}
	b = append(b, 0xff, 0xc0, 0x00, 0x11, 8)
	b = binary.BigEndian.AppendUint16(b, h)
	b = binary.BigEndian.AppendUint16(b, w)
	b = append(b, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1)
	b = append(b, 0xff, 0xda, 0x00, 0x0c, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0)
	return append(b, 0x12, 0x34, 0x56, 0xff, 0xd9)
}

// gifBomb is a GIF whose logical screen is w × h, with one 1x1 frame.
func gifBomb(w, h uint16) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	b = append(b, 0x80, 0, 0, 0, 0, 0, 255, 255, 255) // 2-colour global table
	b = append(b, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0)    // 1x1 frame at 0,0
	b = append(b, 2, 2, 0x44, 0x01, 0)                // LZW data
	return append(b, 0x3b)
}

// webpBomb is a VP8X WebP whose canvas is w × h (each at most 2^24).
func webpBomb(w, h uint32) []byte {
	vp8x := []byte{0, 0, 0, 0, byte(w - 1), byte((w - 1) >> 8), byte((w - 1) >> 16), byte(h - 1), byte((h - 1) >> 8), byte((h - 1) >> 16)}
	body := append([]byte("WEBPVP8X"), binary.LittleEndian.AppendUint32(nil, 10)...)
	body = append(body, vp8x...)
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// animatedGIF is an animation of n whole frames of w × h, frame i
// filled with colours[i%len], each with its delay i+1 centiseconds.
func animatedGIF(t testing.TB, w, h, n int, colours []color.Color) []byte {
	t.Helper()
	g := &gif.GIF{LoopCount: 3}
	for i := 0; i < n; i++ {
		fr := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
		draw.Draw(fr, fr.Bounds(), image.NewUniform(colours[i%len(colours)]), image.Point{}, draw.Src)
		g.Image = append(g.Image, fr)
		g.Delay = append(g.Delay, i+1)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
