package filter

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Limits of SPEC.md.
const (
	MaxLength   = 4096
	MaxOperands = 50
	MaxDepth    = 32
)

// Known modifiers, macros and functions.
var (
	modifiers = map[string]bool{"lower": true, "length": true, "isset": true, "changed": true, "each": true}
	macros    = map[string]bool{
		"now": true, "second": true, "minute": true, "hour": true, "weekday": true, "day": true,
		"month": true, "year": true, "todayStart": true, "todayEnd": true, "monthStart": true,
		"monthEnd": true, "yearStart": true, "yearEnd": true, "yesterday": true, "tomorrow": true,
	}
	functions   = map[string]int{"geoDistance": 4, "strftime": -1}
	segmentName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

type parser struct {
	toks     []token
	i        int
	operands int
}

// Parse parses a filter expression.
func Parse(src string) (Expr, error) {
	if utf8.RuneCountInString(src) > MaxLength {
		return nil, errAt(MaxLength, "expression longer than %d characters", MaxLength)
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, errAt(t.pos, "unexpected %s", describe(t))
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tLParen:
		return "'('"
	case tRParen:
		return "')'"
	case tComma:
		return "','"
	case tAnd:
		return "'&&'"
	case tOr:
		return "'||'"
	case tString:
		return "string"
	case tNumber:
		return "number " + t.text
	}
	return "'" + t.text + "'"
}

func (p *parser) or(depth int) (Expr, error) {
	left, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tOr {
		p.next()
		right, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		left = &Logical{Op: Or, Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) and(depth int) (Expr, error) {
	left, err := p.primary(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tAnd {
		p.next()
		right, err := p.primary(depth)
		if err != nil {
			return nil, err
		}
		left = &Logical{Op: And, Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) primary(depth int) (Expr, error) {
	if p.peek().kind == tLParen {
		t := p.next()
		if depth+1 > MaxDepth {
			return nil, errAt(t.pos, "nesting deeper than %d", MaxDepth)
		}
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tRParen {
			return nil, errAt(t.pos, "expected ')', found %s", describe(t))
		}
		return e, nil
	}
	left, err := p.operand(depth)
	if err != nil {
		return nil, err
	}
	t := p.next()
	if t.kind != tOp {
		return nil, errAt(t.pos, "expected an operator, found %s", describe(t))
	}
	op := Op{Base: strings.TrimPrefix(t.text, "?"), Any: strings.HasPrefix(t.text, "?")}
	right, err := p.operand(depth)
	if err != nil {
		return nil, err
	}
	return &Compare{Left: left, Op: op, Right: right}, nil
}

func (p *parser) operand(depth int) (Operand, error) {
	p.operands++
	t := p.next()
	if p.operands > MaxOperands {
		return nil, errAt(t.pos, "more than %d operands", MaxOperands)
	}
	switch t.kind {
	case tString:
		return &Literal{Kind: LitString, Str: t.text, Pos: t.pos}, nil
	case tNumber:
		return &Literal{Kind: LitNumber, Num: t.num, Pos: t.pos}, nil
	case tIdent:
		return p.ident(t, depth)
	}
	return nil, errAt(t.pos, "expected a value, found %s", describe(t))
}

func (p *parser) ident(t token, depth int) (Operand, error) {
	text := t.text
	switch text {
	case "true", "false":
		return &Literal{Kind: LitBool, Bool: text == "true", Pos: t.pos}, nil
	case "null":
		return &Literal{Kind: LitNull, Pos: t.pos}, nil
	}
	if p.peek().kind == tLParen {
		return p.call(t, depth)
	}
	pathPart, mods, err := splitMods(text, t.pos)
	if err != nil {
		return nil, err
	}
	segs := strings.Split(pathPart, ".")
	for _, s := range segs[1:] {
		if !segmentName.MatchString(s) {
			return nil, errAt(t.pos, "invalid name %q", pathPart)
		}
	}
	if !strings.HasPrefix(segs[0], "@") {
		if !segmentName.MatchString(segs[0]) {
			return nil, errAt(t.pos, "invalid name %q", pathPart)
		}
		return &Field{Path: segs, Mods: mods, Pos: t.pos}, nil
	}
	switch head := segs[0][1:]; {
	case head == "request":
		if len(segs) < 2 {
			return nil, errAt(t.pos, "@request needs a member (auth, method, context, headers, query, body)")
		}
		switch segs[1] {
		case "method", "context":
			if len(segs) != 2 {
				return nil, errAt(t.pos, "@request.%s has no members", segs[1])
			}
		case "auth", "headers", "query", "body":
			if len(segs) < 3 && segs[1] != "auth" {
				return nil, errAt(t.pos, "@request.%s needs a key", segs[1])
			}
		default:
			return nil, errAt(t.pos, "unknown @request member %q", segs[1])
		}
		return &Request{Path: segs[1:], Mods: mods, Pos: t.pos}, nil
	case head == "collection":
		if len(segs) < 3 {
			return nil, errAt(t.pos, "@collection needs a collection and a field")
		}
		return &CollectionRef{Name: segs[1], Path: segs[2:], Mods: mods, Pos: t.pos}, nil
	case macros[head]:
		if len(segs) != 1 || len(mods) > 0 {
			return nil, errAt(t.pos, "@%s takes no members or modifiers", head)
		}
		return &Macro{Name: head, Pos: t.pos}, nil
	default:
		return nil, errAt(t.pos, "unknown %s", segs[0])
	}
}

// splitMods separates `path:mod1:mod2`.
func splitMods(text string, pos int) (string, Modifiers, error) {
	parts := strings.Split(text, ":")
	var mods Modifiers
	for _, m := range parts[1:] {
		if !modifiers[m] {
			return "", nil, errAt(pos, "unknown modifier %q", ":"+m)
		}
		mods = append(mods, m)
	}
	if parts[0] == "" {
		return "", nil, errAt(pos, "missing name before modifier")
	}
	return parts[0], mods, nil
}

func (p *parser) call(t token, depth int) (Operand, error) {
	want, ok := functions[t.text]
	if !ok {
		return nil, errAt(t.pos, "unknown function %q", t.text)
	}
	p.next() // (
	var args []Operand
	if p.peek().kind != tRParen {
		for {
			a, err := p.operand(depth)
			if err != nil {
				return nil, err
			}
			if _, isCall := a.(*Call); isCall {
				return nil, errAt(t.pos, "function calls cannot be nested")
			}
			args = append(args, a)
			if p.peek().kind != tComma {
				break
			}
			p.next()
		}
	}
	if c := p.next(); c.kind != tRParen {
		return nil, errAt(c.pos, "expected ')' after arguments, found %s", describe(c))
	}
	if want >= 0 && len(args) != want {
		return nil, errAt(t.pos, "%s takes %d arguments", t.text, want)
	}
	if t.text == "strftime" && (len(args) < 2 || len(args) > 2) {
		return nil, errAt(t.pos, "strftime takes a format and a date")
	}
	if t.text == "strftime" {
		if l, ok := args[0].(*Literal); !ok || l.Kind != LitString {
			return nil, errAt(t.pos, "strftime's format must be a string")
		}
	}
	return &Call{Name: t.text, Args: args, Pos: t.pos}, nil
}
