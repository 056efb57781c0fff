package thumb

import (
	"bytes"
	"strings"
)

// Format is an image format the generator reads and writes.
type Format uint8

// The formats of SPEC.md's Files section. Unknown is everything else
// (SVG, HEIC, TIFF, BMP, PDF, ...): not thumbnailable.
const (
	Unknown Format = iota
	PNG
	JPEG
	GIF
	WebP
	AVIF
)

// MIME is the format's media type.
func (f Format) MIME() string {
	switch f {
	case PNG:
		return "image/png"
	case JPEG:
		return "image/jpeg"
	case GIF:
		return "image/gif"
	case WebP:
		return "image/webp"
	case AVIF:
		return "image/avif"
	}
	return "application/octet-stream"
}

// String is the format's short name.
func (f Format) String() string {
	switch f {
	case PNG:
		return "PNG"
	case JPEG:
		return "JPEG"
	case GIF:
		return "GIF"
	case WebP:
		return "WebP"
	case AVIF:
		return "AVIF"
	}
	return "unknown"
}

// FormatOf maps a media type (parameters and case ignored) to its
// format; Unknown when the generator does not handle it.
func FormatOf(mime string) Format {
	mime, _, _ = strings.Cut(mime, ";")
	switch strings.ToLower(strings.TrimSpace(mime)) {
	case "image/png", "image/apng":
		return PNG
	case "image/jpeg", "image/jpg", "image/pjpeg":
		return JPEG
	case "image/gif":
		return GIF
	case "image/webp":
		return WebP
	case "image/avif":
		return AVIF
	}
	return Unknown
}

// Supported reports whether a file of this media type may have
// thumbnails, so a caller can serve any other file without opening it
// twice.
func Supported(mime string) bool { return FormatOf(mime) != Unknown }

// SniffLen is how many leading bytes DetectFormat looks at.
const SniffLen = 32

// DetectFormat names the format of content from its first bytes (at
// least SniffLen of them when the content has that many). It knows AVIF,
// which net/http's sniffer reports as video/mp4 or
// application/octet-stream: an upload handler may use it to name AVIF.
func DetectFormat(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return JPEG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF
	case len(head) >= 16 && string(head[:4]) == "RIFF" && string(head[8:15]) == "WEBPVP8":
		return WebP
	case isAVIF(head):
		return AVIF
	}
	return Unknown
}

// isAVIF: an ISO-BMFF `ftyp` box whose major or a compatible brand is
// `avif` (a still image) or `avis` (an image sequence).
func isAVIF(head []byte) bool {
	if len(head) < 12 || string(head[4:8]) != "ftyp" {
		return false
	}
	size := int(head[0])<<24 | int(head[1])<<16 | int(head[2])<<8 | int(head[3])
	end := min(size, len(head))
	for i := 8; i+4 <= end; i += 4 {
		if i == 12 { // the minor version, not a brand
			continue
		}
		if b := string(head[i : i+4]); b == "avif" || b == "avis" {
			return true
		}
	}
	return false
}

// webpAnimated reports a WebP whose VP8X header sets the animation flag.
func webpAnimated(head []byte) bool {
	return len(head) >= 21 && string(head[12:16]) == "VP8X" && head[20]&0x02 != 0
}

// avifSequence reports an AVIF whose major brand is `avis`: an
// animation, whose frames the encoder cannot write back.
func avifSequence(head []byte) bool {
	return len(head) >= 12 && string(head[4:8]) == "ftyp" && string(head[8:12]) == "avis"
}
