package docs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file compares what a command printed with the `# =>` lines under
// it. A fragment that starts with { or [ is loose JSON (see pattern); any
// other fragment is text, where `...` stands for any text, and must match
// one whole output line (surrounding spaces ignored).

// A pattern is an expected JSON value, read from loose JSON: `...` stands
// for any value, any other members of an object, any other elements of an
// array, or any text inside a string or a number.
type pattern struct {
	kind    patKind
	members map[string]*pattern // object: the members that must appear
	keys    []string            // object: member order, for messages
	elems   []*pattern          // array
	open    bool                // array: `...` among the elements
	glob    string              // string, number (text with `...`), literal
}

type patKind int

const (
	patAny patKind = iota
	patObject
	patArray
	patString
	patNumber
	patLiteral // true, false, null
)

// parsePattern reads loose JSON.
func parsePattern(s string) (*pattern, error) {
	p := &patParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected %q after the value", p.rest())
	}
	return v, nil
}

type patParser struct {
	s string
	i int
}

func (p *patParser) space() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\n\r", rune(p.s[p.i])) {
		p.i++
	}
}

func (p *patParser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *patParser) ellipsis() bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], "...") {
		p.i += 3
		return true
	}
	return false
}

func (p *patParser) value() (*pattern, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case p.ellipsis():
		return &pattern{kind: patAny}, nil
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &pattern{kind: patString, glob: s}, nil
	case c == '-' || c >= '0' && c <= '9':
		j := p.i
		for p.i < len(p.s) && strings.ContainsRune("+-.eE0123456789", rune(p.s[p.i])) && !strings.HasPrefix(p.s[p.i:], "...") {
			p.i++
		}
		if strings.HasPrefix(p.s[p.i:], "...") {
			p.i += 3
		}
		return &pattern{kind: patNumber, glob: p.s[j:p.i]}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.i:], lit) {
				p.i += len(lit)
				return &pattern{kind: patLiteral, glob: lit}, nil
			}
		}
		return nil, fmt.Errorf("unexpected %q", p.rest())
	}
}

func (p *patParser) str() (string, error) {
	j := p.i
	p.i++
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var s string
			if err := json.Unmarshal([]byte(p.s[j:p.i]), &s); err != nil {
				return "", fmt.Errorf("bad string %s: %v", p.s[j:p.i], err)
			}
			return s, nil
		}
		p.i++
	}
	return "", fmt.Errorf("unterminated string")
}

func (p *patParser) object() (*pattern, error) {
	o := &pattern{kind: patObject, members: map[string]*pattern{}}
	p.i++ // {
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return o, nil
		}
		if !p.ellipsis() {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, fmt.Errorf("expected a member name or ..., found %q", p.rest())
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, fmt.Errorf("expected : after %q", k)
			}
			p.i++
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			o.members[k] = v
			o.keys = append(o.keys, k)
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return o, nil
		}
		return nil, fmt.Errorf("expected , or } in an object, found %q", p.rest())
	}
}

func (p *patParser) array() (*pattern, error) {
	a := &pattern{kind: patArray}
	p.i++ // [
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return a, nil
		}
		if p.ellipsis() {
			a.open = true
		} else {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, v)
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return a, nil
		}
		return nil, fmt.Errorf("expected , or ] in an array, found %q", p.rest())
	}
}

// globMatch reports whether s matches pattern g, where `...` stands for
// any text.
func globMatch(g, s string) bool {
	if !strings.Contains(g, "...") {
		return g == s
	}
	parts := strings.Split(g, "...")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	return regexp.MustCompile(`(?s)^` + strings.Join(parts, ".*") + `$`).MatchString(s)
}

// match compares a decoded JSON value (numbers as json.Number) with the
// pattern; it returns "" on a match, else where and how they differ.
func (p *pattern) match(v any, path string) string {
	switch p.kind {
	case patAny:
		return ""
	case patObject:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %s", path, show(v))
		}
		for _, k := range p.keys {
			got, ok := m[k]
			if !ok {
				return fmt.Sprintf("%s: no member %q (members: %s)", path, k, memberNames(m))
			}
			if d := p.members[k].match(got, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case patArray:
		a, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("%s: want an array, got %s", path, show(v))
		}
		if !p.open {
			if len(a) != len(p.elems) {
				return fmt.Sprintf("%s: want %d elements, got %d: %s", path, len(p.elems), len(a), show(v))
			}
			for i, e := range p.elems {
				if d := e.match(a[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
					return d
				}
			}
			return ""
		}
		// With `...`: the elements appear in this order, others between.
		j := 0
		for i, e := range p.elems {
			for j < len(a) && e.match(a[j], "") != "" {
				j++
			}
			if j == len(a) {
				return fmt.Sprintf("%s: no element matches element %d of the expected array: %s", path, i, show(v))
			}
			j++
		}
		return ""
	case patString:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("%s: want a string %q, got %s", path, p.glob, show(v))
		}
		if !globMatch(p.glob, s) {
			return fmt.Sprintf("%s: want %q, got %q", path, p.glob, s)
		}
		return ""
	case patNumber:
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: want the number %s, got %s", path, p.glob, show(v))
		}
		if strings.Contains(p.glob, "...") {
			if !globMatch(p.glob, n.String()) {
				return fmt.Sprintf("%s: want %s, got %s", path, p.glob, n)
			}
			return ""
		}
		want, err1 := strconv.ParseFloat(p.glob, 64)
		got, err2 := strconv.ParseFloat(n.String(), 64)
		if err1 != nil || err2 != nil || want != got {
			return fmt.Sprintf("%s: want %s, got %s", path, p.glob, n)
		}
		return ""
	default: // literal
		if show(v) != p.glob {
			return fmt.Sprintf("%s: want %s, got %s", path, p.glob, show(v))
		}
		return ""
	}
}

// depth is how deep in the value a mismatch message points.
func depth(why string) int {
	path, _, _ := strings.Cut(why, ":")
	return strings.Count(path, ".") + strings.Count(path, "[")
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func memberNames(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// An item is one piece of a command's output: a JSON value (which may
// span lines) or one line of text.
type item struct {
	text   string // the item's source text
	json   any    // the decoded value when isJSON
	isJSON bool
}

// outputItems cuts output into items: a line that starts with { or [ and
// opens a valid JSON value is a JSON item (with the lines it spans);
// every other line is a text item.
func outputItems(out string) []item {
	var items []item
	lines := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" {
			continue
		}
		if t[0] == '{' || t[0] == '[' {
			rest := strings.Join(lines[i:], "\n")
			dec := json.NewDecoder(strings.NewReader(rest))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err == nil {
				src := rest[:dec.InputOffset()]
				items = append(items, item{text: strings.TrimSpace(src), json: v, isJSON: true})
				i += strings.Count(src, "\n")
				continue
			}
		}
		items = append(items, item{text: t})
	}
	return items
}

// matchOutput checks the expectations' fragments against the output, in
// order: each must match an item after the one the previous matched. It
// returns, for the first that matches none, the expectation and why.
func matchOutput(out string, expects []expect) (bad *expect, why string) {
	items := outputItems(out)
	at := 0
	for k := range expects {
		e := &expects[k]
		if e.fragment == "" {
			continue
		}
		found := -1
		var closest string
		if e.fragment[0] == '{' || e.fragment[0] == '[' {
			pat, err := parsePattern(e.fragment)
			if err != nil {
				return e, "cannot read the expected JSON: " + err.Error()
			}
			for i := at; i < len(items); i++ {
				if !items[i].isJSON {
					continue
				}
				d := pat.match(items[i].json, "$")
				if d == "" {
					found = i
					break
				}
				if closest == "" || depth(d) > depth(closest) {
					closest = d // the item that matched the furthest
				}
			}
		} else {
			for i := at; i < len(items); i++ {
				if globMatch(e.fragment, items[i].text) {
					found = i
					break
				}
			}
		}
		if found < 0 {
			switch {
			case closest != "":
				why = "the answer differs: " + closest
			case at > 0:
				why = "no line after the one the previous `# =>` matched is " + strconv.Quote(e.fragment)
			default:
				why = "no line of the output is " + strconv.Quote(e.fragment)
			}
			return e, why
		}
		at = found + 1
	}
	return nil, ""
}
