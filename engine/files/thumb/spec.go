package thumb

import "strconv"

// Limits of SPEC.md ("Limits": thumbnails).
const (
	// MaxDimension is the largest width or height a thumbnail has; a
	// larger size in a spec is clamped to it.
	MaxDimension = 4096
	// MaxPixels is the largest source, in pixels (width × height, and for
	// an animated GIF width × height × frames), that is thumbnailed. A
	// larger one is served as it is.
	MaxPixels = 40_000_000
)

// Fit says how a source is fitted into the requested box.
type Fit uint8

const (
	// Contain scales the source down, keeping its aspect ratio, until it
	// fits inside the box; it never enlarges. The default.
	Contain Fit = iota
	// Cover scales the source, keeping its aspect ratio, until it covers
	// the box, then crops the overflow around the centre: the result is
	// exactly the box, enlarged if the source is smaller. `crop` is
	// another name for it.
	Cover
)

// String is the fit's canonical name.
func (f Fit) String() string {
	if f == Cover {
		return "cover"
	}
	return "contain"
}

// Spec is a parsed, clamped thumbnail request: a box of Width × Height
// pixels (each 1 to MaxDimension) and how the source fits into it. One
// of the two may be 0 (PocketBase's `0xH` and `Wx0`): the source is
// resized to the other, keeping its proportion (enlarged if smaller),
// whatever the fit.
type Spec struct {
	Width, Height int
	Fit           Fit
}

// String is the canonical form of the spec, `WxH_fit` (for example
// `100x80_cover`): the same for every way of writing one request
// (`100x80_crop`, `100x80&fit=cover`), so it names the cached variant.
func (s Spec) String() string {
	return strconv.Itoa(s.Width) + "x" + strconv.Itoa(s.Height) + "_" + s.Fit.String()
}

// ParseSpec reads the `thumb` and `fit` query parameters of a download.
// thumb is `<W>x<H>`, optionally followed by `_contain`, `_cover` or
// `_crop`; fit, when not empty, is one of `contain`, `cover`, `crop`, and
// may only be given when thumb has no suffix (SPEC.md: "use one way
// only"). W and H are ASCII decimal digits; a size above MaxDimension is
// clamped to it. Everything else is malformed and answers ok=false, for
// which the caller serves the original file: an empty thumb, a zero size
// (`0x100`: there is no "proportional" zero), a sign, a space, another
// separator or case (`100X100`), an unknown fit, a suffix and fit= both.
// One zero size (`0x100`, `100x0`) keeps the proportion; `0x0` is
// malformed.
func ParseSpec(thumb, fit string) (Spec, bool) {
	size, suffix, hasSuffix := cutSuffix(thumb)
	w, h, ok := parseSize(size)
	if !ok || w == 0 && h == 0 {
		return Spec{}, false
	}
	s := Spec{Width: w, Height: h}
	switch {
	case hasSuffix && fit != "":
		return Spec{}, false
	case hasSuffix:
		s.Fit, ok = parseFit(suffix)
	case fit != "":
		s.Fit, ok = parseFit(fit)
	}
	if !ok {
		return Spec{}, false
	}
	return s, true
}

// cutSuffix splits "100x80_cover" into "100x80" and "cover".
func cutSuffix(thumb string) (size, suffix string, found bool) {
	for i := 0; i < len(thumb); i++ {
		if thumb[i] == '_' {
			return thumb[:i], thumb[i+1:], true
		}
	}
	return thumb, "", false
}

func parseFit(name string) (Fit, bool) {
	switch name {
	case "contain":
		return Contain, true
	case "cover", "crop":
		return Cover, true
	}
	return 0, false
}

// parseSize reads "<W>x<H>".
func parseSize(s string) (w, h int, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == 'x' {
			w, okW := parseDim(s[:i])
			h, okH := parseDim(s[i+1:])
			return w, h, okW && okH
		}
	}
	return 0, 0, false
}

// parseDim reads one dimension: one or more ASCII digits, clamped to
// MaxDimension (so a number of any length is fine); zero is "keep the
// proportion" (ParseSpec refuses it for both).
func parseDim(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n <= MaxDimension {
			n = n*10 + int(c-'0')
		}
	}
	return min(n, MaxDimension), true
}
