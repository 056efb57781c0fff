package webhooks

import (
	"sort"
	"strings"
	"unicode"
)

// Event patterns (SPEC.md "Webhook events"): an exact event name
// (`posts.create`, `order.paid`), a prefix ending in `.*` (`posts.*`
// matches every event of collection posts; `order.*` every custom event
// that starts with `order.`), or `*` (every event). An empty list matches
// nothing. A webhook's patterns are kept in a table of their own so that
// the state machine finds the webhooks of an event with one indexed
// query: the event's candidate patterns are the event itself, each prefix
// of it that ends before a dot followed by `.*`, and `*`.

const (
	maxPatterns   = 100
	maxPatternLen = 200
	maxEventLen   = 200
)

// normalizePatterns checks a webhook's patterns and returns them sorted,
// without duplicates.
func normalizePatterns(list []string) ([]string, string) {
	if len(list) > maxPatterns {
		return nil, "at most 100 patterns"
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(list))
	for _, p := range list {
		p = strings.TrimSpace(p)
		if msg := checkPattern(p); msg != "" {
			return nil, msg
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, ""
}

// checkPattern validates one pattern.
func checkPattern(p string) string {
	if p == "*" {
		return ""
	}
	name := strings.TrimSuffix(p, ".*")
	if msg := checkEventName(name); msg != "" {
		return "pattern " + quote(p) + ": use an exact event, <collection>.* or *"
	}
	return ""
}

// checkEventName validates an event name: 1 to 200 characters, no space
// or control character, no `*`, no empty part between dots.
func checkEventName(e string) string {
	if e == "" || len(e) > maxEventLen {
		return "must be 1 to 200 characters"
	}
	for _, r := range e {
		if r == '*' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return "must not contain spaces, control characters or *"
		}
	}
	for _, part := range strings.Split(e, ".") {
		if part == "" {
			return "must not have an empty part between dots"
		}
	}
	return ""
}

// candidates are the patterns that match event: itself, `<prefix>.*` for
// each prefix ending before a dot, and `*`.
func candidates(event string) []any {
	out := []any{event, "*"}
	for i := 0; i < len(event); i++ {
		if event[i] == '.' {
			out = append(out, event[:i]+".*")
		}
	}
	return out
}

// Matches reports whether pattern matches event (the rule the state
// machine applies through candidates, for tests and tools).
func Matches(pattern, event string) bool {
	for _, c := range candidates(event) {
		if c == pattern {
			return true
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
