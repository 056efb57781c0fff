package pbcompat

import (
	"regexp"
	"strconv"
	"strings"
)

// excerpt is PocketBase's :excerpt(max, withEllipsis) fields modifier
// (pb:tools/picker/excerpt_modifier.go): the value as plain text (tags and
// the content of script and style removed, whitespace collapsed), cut to
// max characters, with "..." when cut and asked for.
type excerpt struct {
	max      int
	ellipsis bool
}

var (
	excerptArgs   = regexp.MustCompile(`^excerpt\(\s*(\d+)\s*(?:,\s*(\w+)\s*)?\)$`)
	htmlDropped   = regexp.MustCompile(`(?is)<(script|style)\b.*?</(script|style)\s*>`)
	htmlTag       = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlSpaceRuns = regexp.MustCompile(`\s+`)
)

// excerpts reads the :excerpt modifiers of a fields parameter, by field
// name (top-level fields only).
func excerpts(fields string) map[string]excerpt {
	var out map[string]excerpt
	for _, f := range splitFields(fields) {
		name, mod, ok := strings.Cut(strings.TrimSpace(f), ":")
		if !ok || strings.Contains(name, ".") {
			continue
		}
		m := excerptArgs.FindStringSubmatch(strings.TrimSpace(mod))
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		ell, _ := strconv.ParseBool(m[2])
		if out == nil {
			out = map[string]excerpt{}
		}
		out[name] = excerpt{max: n, ellipsis: ell}
	}
	return out
}

func (e excerpt) apply(s string) string {
	s = htmlDropped.ReplaceAllString(s, " ")
	s = htmlTag.ReplaceAllString(s, " ")
	s = strings.TrimSpace(htmlSpaceRuns.ReplaceAllString(s, " "))
	r := []rune(s)
	if len(r) <= e.max {
		return s
	}
	s = strings.TrimSpace(string(r[:e.max]))
	if e.ellipsis {
		s += "..."
	}
	return s
}

// applyExcerpts applies ex to the string members of a record.
func applyExcerpts(m map[string]any, ex map[string]excerpt) {
	for name, e := range ex {
		if s, ok := m[name].(string); ok {
			m[name] = e.apply(s)
		}
	}
}
