package thumb

import (
	"bytes"
	"errors"
	"image"
	"image/draw"
	"image/gif"
	"io"
)

// generateGIF thumbnails a GIF. A single frame comes back as a PNG (SPEC.md);
// an animation stays a GIF with every frame resized: each frame is first
// composed on the canvas as a viewer shows it (offsets, transparency,
// disposal), the composed frame is resized, then mapped back onto that
// frame's own palette (see quantize). The output frames are whole-canvas
// frames, so they need no offsets.
//
// The budget of MaxPixels is over all frames (width × height × frames),
// checked from the header and a walk over the blocks before any pixel is
// decompressed, and again for the output (Cover may enlarge).
func generateGIF(w io.Writer, r io.Reader, s Spec) (Format, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Unknown, err
	}
	cfg, err := gif.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Unknown, refuse("GIF header: %v", err)
	}
	frames, err := gifFrames(data)
	if err != nil {
		return Unknown, refuse("GIF: %v", err)
	}
	if err := checkPixels(cfg.Width, cfg.Height, frames); err != nil {
		return Unknown, err
	}
	g, err := gif.DecodeAll(bytes.NewReader(data))
	if err != nil {
		return Unknown, refuse("GIF: %v", err)
	}
	canvas := image.NewNRGBA(image.Rect(0, 0, cfg.Width, cfg.Height))
	if len(g.Image) == 1 {
		fr := g.Image[0]
		draw.Draw(canvas, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
		return PNG, encode(w, fitInto(canvas, s), PNG, false)
	}
	// The output size: the same for every frame, known from the canvas.
	ob := fitInto(image.NewNRGBA(image.Rect(0, 0, cfg.Width, cfg.Height)), s).Bounds()
	if err := checkPixels(ob.Dx(), ob.Dy(), len(g.Image)); err != nil {
		return Unknown, refuse("output: %v", err)
	}
	out := &gif.GIF{
		Image:     make([]*image.Paletted, len(g.Image)),
		Delay:     g.Delay,
		Disposal:  make([]byte, len(g.Image)),
		LoopCount: g.LoopCount,
		Config:    image.Config{Width: ob.Dx(), Height: ob.Dy()},
	}
	var saved *image.NRGBA
	seeThrough := make([]bool, len(g.Image))
	for i, fr := range g.Image {
		disposal := byte(0)
		if i < len(g.Disposal) {
			disposal = g.Disposal[i]
		}
		if disposal == gif.DisposalPrevious {
			saved = image.NewNRGBA(canvas.Bounds())
			copy(saved.Pix, canvas.Pix)
		}
		draw.Draw(canvas, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
		out.Image[i], seeThrough[i] = quantize(fitInto(canvas, s), fr.Palette)
		switch disposal {
		case gif.DisposalBackground:
			draw.Draw(canvas, fr.Bounds(), image.Transparent, image.Point{}, draw.Src)
		case gif.DisposalPrevious:
			canvas, saved = saved, nil
		}
	}
	// Whole-canvas frames: a frame is drawn over the one before, unless it
	// has see-through pixels, which must not show the frame before: then
	// the frame before clears the canvas when it is done (the last frame
	// comes before the first when the animation loops).
	for i := range out.Image {
		out.Disposal[i] = gif.DisposalNone
		if seeThrough[(i+1)%len(out.Image)] {
			out.Disposal[i] = gif.DisposalBackground
		}
	}
	if err := gif.EncodeAll(w, out); err != nil {
		return Unknown, err
	}
	return GIF, nil
}

// gifFrames counts the image descriptors of a GIF by walking its blocks,
// skipping the compressed data unread: how many frames DecodeAll would
// allocate, known without decompressing any.
func gifFrames(b []byte) (int, error) {
	if len(b) < 13 {
		return 0, errors.New("short header")
	}
	p := 13
	if b[10]&0x80 != 0 {
		p += 3 << (b[10]&7 + 1)
	}
	n := 0
	for p < len(b) {
		var err error
		switch b[p] {
		case 0x21: // extension: label, then sub-blocks
			p, err = skipSubBlocks(b, p+2)
		case 0x2c: // image descriptor, local colour table, LZW code size, data
			if p+10 > len(b) {
				return 0, errors.New("short image descriptor")
			}
			flags := b[p+9]
			p += 10
			if flags&0x80 != 0 {
				p += 3 << (flags&7 + 1)
			}
			p, err = skipSubBlocks(b, p+1)
			n++
		case 0x3b: // trailer
			return n, nil
		default:
			return 0, errors.New("unknown block")
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// skipSubBlocks returns the offset after the sub-blocks starting at p.
func skipSubBlocks(b []byte, p int) (int, error) {
	for {
		if p >= len(b) {
			return 0, errors.New("truncated sub-blocks")
		}
		size := int(b[p])
		p++
		if size == 0 {
			return p, nil
		}
		p += size
	}
}
