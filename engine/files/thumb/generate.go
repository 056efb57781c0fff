package thumb

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"

	"github.com/disintegration/imaging"
)

// bufSize is the read buffer in front of the source: large enough that
// the headers a format keeps before its pixels (an APNG's acTL, a JPEG's
// EXIF) are usually peeked at without a second pass.
const bufSize = 64 << 10

// Generate writes to w the thumbnail described by s of the image read
// from src, whose media type is mime, and returns the format written:
// the source's, except a single-frame GIF, which becomes a PNG.
//
// Nothing is decoded before the header says the image's size: a source
// over MaxPixels (a decompression bomb: a small file that claims huge
// dimensions, included) is refused after reading its header alone. A
// refusal wraps ErrNotThumbnailable (the caller serves the original); any
// other error is src's or w's. A decoder that panics on hostile input is
// a refusal too, not a crash. w may have received part of an image when
// an error is returned.
func Generate(w io.Writer, src io.Reader, mime string, s Spec) (out Format, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = Unknown, refuse("decoder failed: %v", p)
		}
	}()
	if s.Width < 0 || s.Height < 0 || s.Width+s.Height < 1 || s.Width > MaxDimension || s.Height > MaxDimension {
		return Unknown, fmt.Errorf("thumb: invalid spec %dx%d", s.Width, s.Height)
	}
	f := FormatOf(mime)
	if f == Unknown {
		return Unknown, refuse("%q is not a format thumbnails are made of", mime)
	}
	rec := &readErr{r: src}
	br := bufio.NewReaderSize(rec, bufSize)
	head, err := br.Peek(SniffLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return Unknown, err
	}
	if got := DetectFormat(head); got != f {
		return Unknown, refuse("content is %s, not %s", got, f)
	}
	if f == GIF {
		out, err = generateGIF(w, br, s)
	} else {
		out, err = generateStill(w, br, f, s)
	}
	if rec.err != nil && errors.Is(err, ErrNotThumbnailable) {
		// The decoder gave up because the source failed to read.
		return Unknown, fmt.Errorf("read source: %w", rec.err)
	}
	return out, err
}

// fitInto resizes img into the spec's box with Lanczos resampling:
// Contain never enlarges; Cover gives exactly the box, cropped around the
// centre.
func fitInto(img image.Image, s Spec) *image.NRGBA {
	if s.Width == 0 || s.Height == 0 {
		// Keep the proportion: the zero side follows the other, clamped
		// to MaxDimension (a 10000x1 source asked for 0x4096 is not a
		// 40-megapixel-wide image).
		w, h := proportional(img.Bounds().Dx(), img.Bounds().Dy(), s)
		return imaging.Resize(img, w, h, imaging.Lanczos)
	}
	if s.Fit == Cover {
		return imaging.Fill(img, s.Width, s.Height, imaging.Center, imaging.Lanczos)
	}
	return imaging.Fit(img, s.Width, s.Height, imaging.Lanczos)
}

// proportional is the size of a srcW × srcH source resized to the
// non-zero side of s, keeping its proportion; each side 1 to MaxDimension.
func proportional(srcW, srcH int, s Spec) (w, h int) {
	w, h = s.Width, s.Height
	if srcW < 1 || srcH < 1 {
		return max(w, 1), max(h, 1)
	}
	if w == 0 {
		w = int((int64(srcW)*int64(h) + int64(srcH)/2) / int64(srcH))
	} else {
		h = int((int64(srcH)*int64(w) + int64(srcW)/2) / int64(srcW))
	}
	return min(max(w, 1), MaxDimension), min(max(h, 1), MaxDimension)
}
