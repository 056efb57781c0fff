package thumb

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"strings"
	"testing"
)

var (
	red   = color.RGBA{255, 0, 0, 255}
	green = color.RGBA{0, 255, 0, 255}
	blue  = color.RGBA{0, 0, 255, 255}
)

// TestGIFSingleFrameBecomesPNG (SPEC.md: single-frame GIF comes back as
// PNG), with the GIF's transparency kept.
func TestGIFSingleFrameBecomesPNG(t *testing.T) {
	fr := image.NewPaletted(image.Rect(0, 0, 120, 60), color.Palette{color.RGBA{}, red})
	draw.Draw(fr, image.Rect(60, 0, 120, 60), image.NewUniform(red), image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := gif.Encode(&b, fr, nil); err != nil {
		t.Fatal(err)
	}
	out, f, err := generate(t, b.Bytes(), "image/gif", Spec{Width: 60, Height: 60})
	if err != nil {
		t.Fatal(err)
	}
	d := decodeOutput(t, out)
	if f != PNG || d.format != PNG || d.width != 60 || d.height != 30 {
		t.Fatalf("single-frame GIF gave %s (bytes %s) %dx%d, want PNG 60x30", f, d.format, d.width, d.height)
	}
	if _, _, _, a := d.img.At(5, 15).RGBA(); a != 0 {
		t.Errorf("transparent half has alpha %d", a>>8)
	}
	if r, _, _, a := d.img.At(55, 15).RGBA(); r>>8 != 255 || a>>8 != 255 {
		t.Errorf("red half is %v", d.img.At(55, 15))
	}
}

// TestGIFAnimatedStaysAnimated: every frame resized, in order, with its
// delay and the loop count, for each fit.
func TestGIFAnimatedStaysAnimated(t *testing.T) {
	raw := animatedGIF(t, 120, 80, 5, []color.Color{red, green, blue})
	for _, c := range []struct {
		s    Spec
		w, h int
	}{
		{Spec{Width: 60, Height: 60}, 60, 40},
		{Spec{Width: 30, Height: 30, Fit: Cover}, 30, 30},
		{Spec{Width: 200, Height: 200, Fit: Cover}, 200, 200},
	} {
		out, f, err := generate(t, raw, "image/gif", c.s)
		if err != nil {
			t.Fatal(err)
		}
		d := decodeOutput(t, out)
		if f != GIF || d.format != GIF || d.frames != 5 {
			t.Fatalf("%s: %s (bytes %s) with %d frames, want a GIF of 5", c.s, f, d.format, d.frames)
		}
		if d.width != c.w || d.height != c.h {
			t.Errorf("%s: canvas %dx%d, want %dx%d", c.s, d.width, d.height, c.w, c.h)
		}
		if d.gif.LoopCount != 3 {
			t.Errorf("%s: loop count %d, want 3", c.s, d.gif.LoopCount)
		}
		for i, fr := range d.gif.Image {
			if fr.Bounds() != image.Rect(0, 0, c.w, c.h) {
				t.Errorf("%s: frame %d bounds %v", c.s, i, fr.Bounds())
			}
			if d.gif.Delay[i] != i+1 {
				t.Errorf("%s: frame %d delay %d, want %d", c.s, i, d.gif.Delay[i], i+1)
			}
			want := []color.Color{red, green, blue}[i%3]
			if got := color.RGBAModel.Convert(fr.At(c.w/2, c.h/2)); got != want {
				t.Errorf("%s: frame %d is %v, want %v", c.s, i, got, want)
			}
		}
	}
}

// TestGIFAnimatedComposesFrames: frames that draw only part of the
// canvas (offsets, transparency, disposal) are composed as a viewer
// shows them before they are resized.
func TestGIFAnimatedComposesFrames(t *testing.T) {
	pal := color.Palette{color.RGBA{}, red, green, blue}
	full := image.NewPaletted(image.Rect(0, 0, 100, 100), pal)
	draw.Draw(full, full.Bounds(), image.NewUniform(red), image.Point{}, draw.Src)
	// A green square in the bottom right corner, over the red frame.
	patch := image.NewPaletted(image.Rect(50, 50, 100, 100), pal)
	draw.Draw(patch, patch.Bounds(), image.NewUniform(green), image.Point{}, draw.Src)
	// A frame that is all transparent but a blue square top left, after a
	// frame disposed to background: the rest must be see-through.
	hole := image.NewPaletted(image.Rect(0, 0, 100, 100), pal)
	draw.Draw(hole, image.Rect(0, 0, 50, 50), image.NewUniform(blue), image.Point{}, draw.Src)
	g := &gif.GIF{
		Image:    []*image.Paletted{full, patch, hole},
		Delay:    []int{10, 10, 10},
		Disposal: []byte{gif.DisposalNone, gif.DisposalBackground, gif.DisposalNone},
		Config:   image.Config{Width: 100, Height: 100, ColorModel: pal},
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	out, _, err := generate(t, b.Bytes(), "image/gif", Spec{Width: 50, Height: 50})
	if err != nil {
		t.Fatal(err)
	}
	d := decodeOutput(t, out)
	// Play the output as a viewer does and look at each frame.
	shown := play(d.gif)
	checks := []struct {
		frame int
		x, y  int
		want  color.RGBA
	}{
		{0, 10, 10, red}, {0, 40, 40, red},
		{1, 10, 10, red}, {1, 40, 40, green}, // the patch over the first frame
		{2, 10, 10, blue}, {2, 40, 40, color.RGBA{}}, // frame 1 was cleared: see-through
	}
	for _, c := range checks {
		if got := color.RGBAModel.Convert(shown[c.frame].At(c.x, c.y)); got != c.want {
			t.Errorf("frame %d at %d,%d shows %v, want %v", c.frame, c.x, c.y, got, c.want)
		}
	}
}

// play composes a GIF's frames as a viewer shows them, honouring each
// frame's disposal, starting from a transparent canvas.
func play(g *gif.GIF) []*image.RGBA {
	canvas := image.NewRGBA(image.Rect(0, 0, g.Config.Width, g.Config.Height))
	var shown []*image.RGBA
	for i, fr := range g.Image {
		before := image.NewRGBA(canvas.Bounds())
		copy(before.Pix, canvas.Pix)
		draw.Draw(canvas, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
		snap := image.NewRGBA(canvas.Bounds())
		copy(snap.Pix, canvas.Pix)
		shown = append(shown, snap)
		switch g.Disposal[i] {
		case gif.DisposalBackground:
			draw.Draw(canvas, fr.Bounds(), image.Transparent, image.Point{}, draw.Src)
		case gif.DisposalPrevious:
			canvas = before
		}
	}
	return shown
}

// TestGIFAnimationOverBudget: the 40-megapixel budget counts every frame
// (from a walk over the blocks, before decompressing), and the output's
// frames too (Cover enlarges).
func TestGIFAnimationOverBudget(t *testing.T) {
	// 11 frames of a 2000x2000 canvas: 44 MP, in a file of a few KB.
	frames := make([]*image.Paletted, 11)
	for i := range frames {
		frames[i] = image.NewPaletted(image.Rect(0, 0, 1, 1), palette.Plan9)
	}
	var b bytes.Buffer
	err := gif.EncodeAll(&b, &gif.GIF{Image: frames, Delay: make([]int, 11), Config: image.Config{Width: 2000, Height: 2000, ColorModel: color.Palette(palette.Plan9)}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := gifFrames(b.Bytes()); err != nil || n != 11 {
		t.Fatalf("gifFrames = %d, %v; want 11", n, err)
	}
	_, _, err = generate(t, b.Bytes(), "image/gif", Spec{Width: 10, Height: 10})
	if !errors.Is(err, ErrNotThumbnailable) || !strings.Contains(err.Error(), "in 11 frames") {
		t.Errorf("44 MP animation: err = %v, want a refusal over the frames", err)
	}
	// 30 frames of 100x100 enlarged to 4096x4096: 503 MP of output.
	raw := animatedGIF(t, 100, 100, 30, []color.Color{red, green})
	_, _, err = generate(t, raw, "image/gif", Spec{Width: 4096, Height: 4096, Fit: Cover})
	if !errors.Is(err, ErrNotThumbnailable) || !strings.Contains(err.Error(), "output") {
		t.Errorf("enlarged animation: err = %v, want a refusal of the output", err)
	}
}

// TestQuantizeAddsTransparentEntry: a palette without a transparent
// colour gets one when a resized frame has see-through pixels, and the
// opaque pixels map to their nearest palette colour.
func TestQuantizeAddsTransparentEntry(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	img.SetNRGBA(0, 0, color.NRGBA{250, 10, 5, 255})
	img.SetNRGBA(1, 0, color.NRGBA{0, 0, 0, 10})
	p, see := quantize(img, color.Palette{red, green})
	if !see || len(p.Palette) != 3 {
		t.Fatalf("see-through %v, palette %v", see, p.Palette)
	}
	if p.Pix[0] != 0 || p.Pix[1] != 2 {
		t.Errorf("indices %v, want [0 2]", p.Pix)
	}
}
