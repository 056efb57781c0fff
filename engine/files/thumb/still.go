package thumb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"image/png"
	"io"

	"github.com/disintegration/imaging"
	"github.com/gen2brain/avif"
	xwebp "golang.org/x/image/webp"
)

// generateStill thumbnails a PNG, JPEG, WebP or AVIF source: header
// first (refusing animations and anything over MaxPixels), then the
// pixels, the resize and the encoder of the same format.
func generateStill(w io.Writer, br *bufio.Reader, f Format, s Spec) (Format, error) {
	head, _ := br.Peek(SniffLen)
	switch {
	case f == WebP && webpAnimated(head):
		return Unknown, refuse("animated WebP (its frames cannot be written back)")
	case f == AVIF && avifSequence(head):
		return Unknown, refuse("AVIF image sequence (its frames cannot be written back)")
	case f == PNG && pngAnimated(br):
		return Unknown, refuse("animated PNG (its frames cannot be written back)")
	}
	img, err := decodeStill(br, f)
	if err != nil {
		return Unknown, err
	}
	// A lossless WebP (VP8L, which decodes to NRGBA) stays lossless:
	// graphics and screenshots keep their sharp edges.
	_, lossless := img.(*image.NRGBA)
	if f == WebP {
		img = webpRGB(img)
	}
	out := fitInto(img, s)
	if err := encode(w, out, f, f == WebP && lossless); err != nil {
		return Unknown, err
	}
	return f, nil
}

// decodeStill reads the header, checks the size, then decodes. The
// header bytes are kept and replayed in front of the rest, so the source
// is read once, as a stream (AVIF's decoder wants it whole in memory).
func decodeStill(br *bufio.Reader, f Format) (image.Image, error) {
	if f == AVIF {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		cfg, err := avif.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return nil, refuse("AVIF header: %v", err)
		}
		if err := checkPixels(cfg.Width, cfg.Height, 1); err != nil {
			return nil, err
		}
		img, err := avif.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, refuse("AVIF: %v", err)
		}
		return img, nil
	}
	var head bytes.Buffer
	cfg, err := decodeConfig(io.TeeReader(br, &head), f)
	if err != nil {
		return nil, refuse("%s header: %v", f, err)
	}
	if err := checkPixels(cfg.Width, cfg.Height, 1); err != nil {
		return nil, err
	}
	body := io.MultiReader(&head, br)
	var img image.Image
	switch f {
	case JPEG:
		// EXIF orientation applied: a phone photo's thumbnail stands up.
		img, err = imaging.Decode(body, imaging.AutoOrientation(true))
	case PNG:
		img, err = png.Decode(body)
	case WebP:
		img, err = xwebp.Decode(body)
	}
	if err != nil {
		return nil, refuse("%s: %v", f, err)
	}
	return img, nil
}

func decodeConfig(r io.Reader, f Format) (image.Config, error) {
	switch f {
	case JPEG:
		return jpeg.DecodeConfig(r)
	case PNG:
		return png.DecodeConfig(r)
	default:
		return xwebp.DecodeConfig(r)
	}
}

// pngAnimated walks the PNG's chunks in the read buffer looking for an
// acTL (APNG) before the first IDAT. Past the buffer it says no: the
// default image is then thumbnailed.
func pngAnimated(br *bufio.Reader) bool {
	b, _ := br.Peek(bufSize)
	for p := 8; p+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[p:]))
		switch string(b[p+4 : p+8]) {
		case "acTL":
			return true
		case "IDAT":
			return false
		}
		if n < 0 || n > len(b) {
			return false
		}
		p += 12 + n
	}
	return false
}
