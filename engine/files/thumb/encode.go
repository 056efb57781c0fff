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
// override; WebP takes the same number on its own scale, and AVIF the
// quality at which its thumbnails look like the JPEG's at about two
// thirds of the size (measured in the package doc).
const (
	jpegQuality = 85
	webpQuality = 85
	webpMethod  = 4 // libwebp's default speed/size trade-off
	avifQuality = 70
	avifSpeed   = 8 // 0 slowest .. 10 fastest
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
