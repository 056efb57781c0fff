package jsvm

import (
	"regexp"
	"strings"
)

// A custom route's path is stored without its leading slash (CONTRACT.md)
// and served under /api/v1/custom/. It is segments separated by "/": a
// literal (letters, digits and . _ ~ -) or a parameter, ":name", whose
// value fills params.name. Two routes conflict when they have the same
// method and the same segments once every parameter is written ":".
//
// A request takes the route whose segments match it, a literal before a
// parameter at the first segment where two routes differ, and a route of
// its own method before one of any method ("*").

var (
	literalSegment = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
	paramName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
)

// Bounds of a route's path.
const (
	maxPathLen      = 512
	maxPathSegments = 32
)

// routePath is a parsed path: its segments, "" where a parameter is,
// and the parameters' names at their positions.
type routePath struct {
	segs   []string
	params []string
}

// parsePath checks path (leading and trailing slashes removed) and
// returns it parsed, its normalized form and its pattern; msg says why a
// path is refused.
func parsePath(path string) (rp routePath, norm, pattern, msg string) {
	norm = strings.Trim(strings.TrimSpace(path), "/")
	switch {
	case norm == "":
		return rp, norm, "", "cannot be blank"
	case len(norm) > maxPathLen:
		return rp, norm, "", "must be at most 512 characters"
	}
	parts := strings.Split(norm, "/")
	if len(parts) > maxPathSegments {
		return rp, norm, "", "must have at most 32 segments"
	}
	seen := map[string]bool{}
	pat := make([]string, len(parts))
	rp.segs, rp.params = make([]string, len(parts)), make([]string, len(parts))
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			if !paramName.MatchString(name) {
				return rp, norm, "", "parameter " + p + " must be ':' and a name of letters, digits and underscores"
			}
			if seen[name] {
				return rp, norm, "", "parameter :" + name + " appears twice"
			}
			seen[name] = true
			rp.params[i], pat[i] = name, ":"
			continue
		}
		if !literalSegment.MatchString(p) {
			return rp, norm, "", "segment " + quote(p) + " may hold only letters, digits and . _ ~ - (or be a :parameter)"
		}
		rp.segs[i], pat[i] = p, p
	}
	return rp, norm, strings.Join(pat, "/"), ""
}

func quote(s string) string { return `"` + s + `"` }

// match reports whether the request path's segments fit rp, and the
// parameters' values.
func (rp routePath) match(segs []string) (map[string]any, bool) {
	if len(segs) != len(rp.segs) {
		return nil, false
	}
	var params map[string]any
	for i, s := range segs {
		if name := rp.params[i]; name != "" {
			if s == "" {
				return nil, false
			}
			if params == nil {
				params = map[string]any{}
			}
			params[name] = s
			continue
		}
		if s != rp.segs[i] {
			return nil, false
		}
	}
	if params == nil {
		params = map[string]any{}
	}
	return params, true
}

// specificity orders paths for matching: by length (paths of different
// lengths never match the same request), then the first segment where one
// has a literal and the other a parameter puts the literal first.
func specificity(a, b routePath) int {
	if len(a.segs) != len(b.segs) {
		return len(a.segs) - len(b.segs)
	}
	for i := range a.segs {
		al, bl := a.params[i] == "", b.params[i] == ""
		if al != bl {
			if al {
				return -1
			}
			return 1
		}
	}
	return 0
}
