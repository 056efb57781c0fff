package thumb

import (
	"errors"
	"fmt"
	"io"
)

// ErrNotThumbnailable wraps every refusal that depends on the source's
// content alone: a format the generator does not handle, content that is
// not what its media type says, a source over MaxPixels or claiming to
// be (a decompression bomb), an animation it cannot write back, an image
// its decoder rejects. The caller serves the original file. Errors that
// are not this one are the source's or the cache's I/O.
var ErrNotThumbnailable = errors.New("not thumbnailable")

// refuse is an ErrNotThumbnailable that says why.
func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotThumbnailable}, args...)...)
}

// checkPixels refuses a source of w × h pixels in frames frames that is
// empty or larger than MaxPixels, before anything is decoded.
func checkPixels(w, h, frames int) error {
	if w <= 0 || h <= 0 || frames <= 0 {
		return refuse("empty image (%dx%d, %d frames)", w, h, frames)
	}
	px := int64(w) * int64(h) * int64(frames)
	if px > MaxPixels {
		if frames > 1 {
			return refuse("%dx%d in %d frames is %d pixels, over %d", w, h, frames, px, MaxPixels)
		}
		return refuse("%dx%d is %d pixels, over %d", w, h, px, MaxPixels)
	}
	return nil
}

// readErr remembers the first error, other than EOF, of the source
// reader, so a decoder's failure is told apart from the source's: a
// failed read is the caller's I/O error, not a verdict on the content.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && e.err == nil && !errors.Is(err, io.EOF) {
		e.err = err
	}
	return n, err
}
