package thumb

import (
	"image"
	"image/color"
)

// quantize maps a resized frame back onto the palette of the source frame
// it came from, pixel by pixel to the nearest colour, without dithering:
// the colours stay the source's, and an animation does not shimmer with
// dither noise that changes from frame to frame. GIF has one bit of
// alpha: a pixel under half opacity becomes the palette's transparent
// entry (one is added when the palette has none and room for it). It
// reports whether any pixel is transparent.
//
// GIF has no quality setting; SPEC.md's "animated GIF 95" has no knob to
// turn in this encoder. Keeping each frame's own palette is the most
// faithful choice there is: the only loss is resampled in-between colours
// snapping to their nearest palette entry.
func quantize(img *image.NRGBA, src color.Palette) (*image.Paletted, bool) {
	pal := make(color.Palette, len(src), max(len(src), 1)+1)
	copy(pal, src)
	b := img.Bounds()
	clearIdx := -1
	opaque := make([]rgb, len(pal))
	for i, c := range pal {
		r, g, bl, a := c.RGBA()
		if a == 0 && clearIdx < 0 {
			clearIdx = i
		}
		if a < 0x8000 {
			opaque[i] = rgb{farAway, 0, 0} // never the nearest opaque colour
			continue
		}
		// Un-premultiply to compare with the straight-alpha frame.
		opaque[i] = rgb{int32(r * 0xffff / a >> 8), int32(g * 0xffff / a >> 8), int32(bl * 0xffff / a >> 8)}
	}
	dst := image.NewPaletted(b, pal)
	nearest := map[uint32]uint8{}
	seeThrough := false
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[(y-b.Min.Y)*img.Stride:]
		drow := dst.Pix[(y-b.Min.Y)*dst.Stride:]
		for x := 0; x < b.Dx(); x++ {
			px := row[4*x : 4*x+4]
			if px[3] < 0x80 {
				if clearIdx < 0 {
					if len(pal) == 256 {
						// No room: the nearest colour stands in.
						drow[x] = lookup(nearest, opaque, px)
						continue
					}
					clearIdx = len(pal)
					pal = append(pal, color.RGBA{})
					opaque = append(opaque, rgb{farAway, 0, 0})
					dst.Palette = pal
				}
				drow[x] = uint8(clearIdx)
				seeThrough = true
				continue
			}
			drow[x] = lookup(nearest, opaque, px)
		}
	}
	return dst, seeThrough
}

// rgb is a palette colour, straight alpha, 8 bits a channel; a
// see-through entry has r = farAway, so that it is never the nearest.
type rgb struct{ r, g, b int32 }

const farAway = -1 << 20

// lookup is the index of the palette colour nearest (Euclidean RGB) to
// the pixel px, remembered per colour: a frame has few distinct colours
// next to its pixels.
func lookup(memo map[uint32]uint8, pal []rgb, px []byte) uint8 {
	key := uint32(px[0])<<16 | uint32(px[1])<<8 | uint32(px[2])
	if i, ok := memo[key]; ok {
		return i
	}
	best, bestD := 0, int64(-1)
	for i, c := range pal {
		dr, dg, db := int64(c.r)-int64(px[0]), int64(c.g)-int64(px[1]), int64(c.b)-int64(px[2])
		d := dr*dr + dg*dg + db*db
		if bestD < 0 || d < bestD {
			best, bestD = i, d
		}
	}
	memo[key] = uint8(best)
	return uint8(best)
}
