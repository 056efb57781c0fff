package thumb

import "image"

// webpRGB converts a decoded lossy WebP to RGB correctly. VP8 stores
// limited-range ("studio", Y 16-235) BT.601 YCbCr, but x/image/webp hands
// the planes over as image.YCbCr, whose conversion is JPEG's full range
// (golang/go#40173): black would come out as 16, white as 235, every
// colour washed out, and each WebP thumbnail of a WebP greyer. This is
// libwebp's own fixed-point conversion (src/dsp/yuv.h), chroma taken from
// the nearest sample. Anything else (a lossless WebP decodes to NRGBA) is
// returned as it is.
func webpRGB(img image.Image) image.Image {
	var ycc *image.YCbCr
	var alpha []uint8
	var aStride int
	switch m := img.(type) {
	case *image.YCbCr:
		ycc = m
	case *image.NYCbCrA:
		ycc, alpha, aStride = &m.YCbCr, m.A, m.AStride
	default:
		return img
	}
	b := ycc.Rect
	out := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := out.Pix[(y-b.Min.Y)*out.Stride:]
		for x := b.Min.X; x < b.Max.X; x++ {
			yy := int(ycc.Y[ycc.YOffset(x, y)])
			ci := ycc.COffset(x, y)
			u, v := int(ycc.Cb[ci]), int(ycc.Cr[ci])
			px := row[4*(x-b.Min.X):]
			px[0] = clip8(multHi(yy, 19077) + multHi(v, 26149) - 14234)
			px[1] = clip8(multHi(yy, 19077) - multHi(u, 6419) - multHi(v, 13320) + 8708)
			px[2] = clip8(multHi(yy, 19077) + multHi(u, 33050) - 17685)
			px[3] = 255
			if alpha != nil {
				px[3] = alpha[(y-b.Min.Y)*aStride+(x-b.Min.X)]
			}
		}
	}
	return out
}

func multHi(v, coeff int) int { return (v * coeff) >> 8 }

// clip8 brings a value with 6 fractional bits to 0-255.
func clip8(v int) uint8 {
	const mask = (256 << 6) - 1
	if v&^mask == 0 {
		return uint8(v >> 6)
	}
	if v < 0 {
		return 0
	}
	return 255
}
