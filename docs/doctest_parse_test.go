package docs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A doc is one Markdown file cut into what the doc test runs: the ```sh
// blocks in file order, each cut into segments. Line numbers are 1-based
// lines of the Markdown file.
type doc struct {
	path   string
	blocks []block
	// problems are convention breaches found while parsing (a curl example
	// outside an sh block, a skip without a reason, a bad expectation):
	// each fails the test with its line.
	problems []problem
}

// A block is one ```sh fence.
type block struct {
	line     int    // the line of the opening fence
	skip     string // the reason of a `# doctest: skip` marker; "" runs it
	segments []segment
}

// A segment is the commands between two expectations: the lines run
// together, then checked against the `# =>` lines that follow them.
type segment struct {
	first, last int    // lines of the commands
	script      string // the commands, as written (before substitution)
	expects     []expect
}

// An expect is one `# =>` line (with its continuation lines): an
// optional HTTP status and an optional fragment of the answer.
type expect struct {
	line     int
	status   int    // 0: not checked
	fragment string // "" with a status: only the status is checked
}

// String renders the expectation as the doc writes it, without `# =>`.
func (e expect) String() string {
	switch {
	case e.status == 0:
		return e.fragment
	case e.fragment == "":
		return strconv.Itoa(e.status)
	}
	return strconv.Itoa(e.status) + " " + e.fragment
}

// A problem is a breach of the convention at a line.
type problem struct {
	line int
	msg  string
}

func (p problem) String() string { return fmt.Sprintf("line %d: %s", p.line, p.msg) }

var (
	fenceRE  = regexp.MustCompile("^( *)(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	curlLine = regexp.MustCompile(`^\s*(\$\s+)?curl\s`)
	statusRE = regexp.MustCompile(`^([1-5][0-9][0-9])(\s+|$)`)
)

// shellLike are the fences that could hold a shell example which the doc
// test would not run: a curl command line in one of them is a problem.
var shellLike = map[string]bool{"": true, "console": true, "bash": true, "shell": true, "zsh": true, "sh-session": true, "shell-session": true}

// skipMarker starts the first line of a block that is not run.
const skipMarker = "# doctest: skip"

// parseDoc cuts a Markdown file into blocks and segments.
func parseDoc(path, text string) *doc {
	d := &doc{path: path}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence, info := len(m[1]), m[2], m[3]
		start := i
		var body []string
		for i++; i < len(lines); i++ {
			l := lines[i]
			if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "" {
				break
			}
			// De-indent by the fence's indentation (blocks inside list items).
			for k := 0; k < indent && strings.HasPrefix(l, " "); k++ {
				l = l[1:]
			}
			body = append(body, l)
		}
		if info != "sh" {
			if !shellLike[info] {
				continue // output, JSON, other languages
			}
			for k, l := range body {
				if curlLine.MatchString(l) {
					d.problems = append(d.problems, problem{start + 2 + k,
						fmt.Sprintf("a curl example in a ```%s block: curl examples go in ```sh blocks, which the doc test runs (or mark one `%s (reason)`)", info, skipMarker)})
					break
				}
			}
			continue
		}
		d.blocks = append(d.blocks, parseBlock(d, start+1, body))
	}
	return d
}

// parseBlock cuts the body of an sh block (its first line is line
// first+1 of the file) into segments.
func parseBlock(d *doc, fenceLine int, body []string) block {
	b := block{line: fenceLine}
	for k, l := range body {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, skipMarker) {
			reason := strings.Trim(strings.TrimSpace(strings.TrimPrefix(t, skipMarker)), "()-—:, ")
			if reason == "" {
				d.problems = append(d.problems, problem{fenceLine + 1 + k, "`" + skipMarker + "` needs a reason"})
				reason = "no reason given"
			}
			b.skip = reason
			return b
		}
		break
	}
	var cur segment
	var script []string
	flush := func() {
		if len(script) > 0 || len(cur.expects) > 0 {
			cur.script = strings.Join(script, "\n")
			b.segments = append(b.segments, cur)
		}
		cur, script = segment{}, nil
	}
	for k := 0; k < len(body); k++ {
		line := fenceLine + 1 + k
		t := strings.TrimSpace(body[k])
		if strings.HasPrefix(t, "# =>") {
			e, used, err := parseExpect(body[k:], line)
			if err != nil {
				d.problems = append(d.problems, problem{line, err.Error()})
			}
			if len(script) == 0 && len(cur.expects) == 0 {
				d.problems = append(d.problems, problem{line, "`# =>` with no command before it"})
			}
			cur.expects = append(cur.expects, e)
			k += used - 1
			continue
		}
		if len(cur.expects) > 0 {
			// A command after expectations starts the next segment.
			if t == "" || strings.HasPrefix(t, "#") {
				continue // blank lines and comments between segments
			}
			flush()
		}
		if t == "" && len(script) == 0 {
			continue
		}
		if len(script) == 0 {
			cur.first = line
		}
		script = append(script, body[k])
		if t != "" {
			cur.last = line
		}
	}
	flush()
	return b
}

// parseExpect reads the `# =>` line at lines[0], with the comment lines
// that continue an unfinished JSON fragment; used is how many lines it
// took.
func parseExpect(lines []string, line int) (e expect, used int, err error) {
	e.line = line
	text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[0]), "# =>"))
	used = 1
	if m := statusRE.FindStringSubmatch(text); m != nil {
		rest := strings.TrimSpace(text[len(m[0]):])
		if rest == "" || rest[0] == '{' || rest[0] == '[' {
			e.status, _ = strconv.Atoi(m[1])
			text = rest
		}
	}
	if text != "" && (text[0] == '{' || text[0] == '[') {
		for !balanced(text) {
			if used >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[used]), "#") {
				return e, used, fmt.Errorf("the JSON of this `# =>` is not closed (continue it on `#` lines)")
			}
			text += " " + strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[used]), "#"))
			used++
		}
		if _, perr := parsePattern(text); perr != nil {
			return e, used, fmt.Errorf("cannot read the expected JSON: %v", perr)
		}
	}
	if text == "" && e.status == 0 {
		return e, used, fmt.Errorf("an empty `# =>`")
	}
	e.fragment = text
	return e, used, nil
}

// balanced reports whether every bracket of a JSON text outside strings
// is closed.
func balanced(s string) bool {
	depth, inStr, esc := 0, false, false
	for _, c := range s {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return depth <= 0
}
