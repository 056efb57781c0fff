package thumb

import (
	"image"
	"image/jpeg"
	"image/png"
	"io"

	"github.com/gen2brain/avif"
	gwebp "github.com/gen2brain/webp"
)

// Encoder settings. SPEC.md fixes JPEG's quality at 85 and allows no
// override; it names no number for WebP or AVIF. Measured on a 400x266
// thumbnail of a photograph (PSNR against the resized original, size,
// encode time on one core):
//
//	JPEG q85              30.0 dB  48 KB    5 ms
//	WebP q85 (method 4)   32.2 dB  43 KB   54 ms
//	AVIF q70 speed 10     32.2 dB  43 KB   58 ms
//	AVIF q70 speed 8      32.5 dB  40 KB  205 ms
//
// WebP takes JPEG's number and lands a little better and smaller; AVIF's
// quality 70 matches it, and speed 10 (libaom's fastest) because speed 8
// saves 7% of the bytes for three and a half times the time.
const (
	jpegQuality = 85
	webpQuality = 85
	webpMethod  = 4 // libwebp's default speed/size trade-off
	avifQuality = 70
	avifSpeed   = 10 // 0 slowest .. 10 fastest
)

// encode writes img in format f.
func encode(w io.Writer, img image.Image, f Format, lossless bool) error {
	switch f {
	case JPEG:
		return jpeg.Encode(w, img, &jpeg.Options{Quality: jpegQuality})
	case WebP:
		return gwebp.Encode(w, img, gwebp.Options{Quality: webpQuality, Method: webpMethod, Lossless: lossless})
	case AVIF:
		return avif.Encode(w, img, avif.Options{
			Quality:           avifQuality,
			QualityAlpha:      avifQuality,
			Speed:             avifSpeed,
			ChromaSubsampling: image.YCbCrSubsampleRatio420,
		})
	default:
		return (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(w, img)
	}
}
