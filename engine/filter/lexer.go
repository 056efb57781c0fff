package filter

import (
	"fmt"
	"strconv"
	"strings"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tLParen
	tRParen
	tComma
	tAnd
	tOr
	tOp
	tString
	tNumber
	tIdent // a.b.c:mod, @request.x, @now
)

type token struct {
	kind tokKind
	text string // operator, identifier or decoded string
	num  float64
	pos  int
}

// SyntaxError is a malformed expression.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("filter: %s at offset %d", e.Msg, e.Pos) }

func errAt(pos int, format string, args ...any) error {
	return &SyntaxError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '@' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '.' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lex splits src into tokens.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			toks = append(toks, token{kind: tLParen, pos: i})
			i++
		case c == ')':
			toks = append(toks, token{kind: tRParen, pos: i})
			i++
		case c == ',':
			toks = append(toks, token{kind: tComma, pos: i})
			i++
		case strings.HasPrefix(src[i:], "&&"):
			toks = append(toks, token{kind: tAnd, pos: i})
			i += 2
		case strings.HasPrefix(src[i:], "||"):
			toks = append(toks, token{kind: tOr, pos: i})
			i += 2
		case c == '\'' || c == '"':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, text: s, pos: i})
			i = n
		case isDigit(c) || (c == '-' && i+1 < len(src) && (isDigit(src[i+1]) || src[i+1] == '.')) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i + 1
			for j < len(src) && (isDigit(src[j]) || src[j] == '.' || src[j] == 'e' || src[j] == 'E' ||
				((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			f, err := strconv.ParseFloat(src[i:j], 64)
			if err != nil || f != f || f > 1e308 || f < -1e308 {
				return nil, errAt(i, "invalid number %q", src[i:j])
			}
			toks = append(toks, token{kind: tNumber, num: f, text: src[i:j], pos: i})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: src[i:j], pos: i})
			i = j
		default:
			op, n := lexOp(src[i:])
			if n == 0 {
				return nil, errAt(i, "unexpected character %q", c)
			}
			toks = append(toks, token{kind: tOp, text: op, pos: i})
			i += n
		}
	}
	return append(toks, token{kind: tEOF, pos: len(src)}), nil
}

// lexOp reads a comparison operator, longest first.
func lexOp(s string) (string, int) {
	for _, op := range []string{"?!=", "?>=", "?<=", "?!~", "?=", "?>", "?<", "?~", "!=", ">=", "<=", "!~", "=", ">", "<", "~"} {
		if strings.HasPrefix(s, op) {
			return op, len(op)
		}
	}
	return "", 0
}

// lexString decodes a quoted string starting at src[i]; backslash escapes
// \n, \t, \r and any other character as itself.
func lexString(src string, i int) (string, int, error) {
	q := src[i]
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		c := src[j]
		switch {
		case c == '\\':
			if j+1 >= len(src) {
				return "", 0, errAt(j, "unterminated escape")
			}
			j++
			switch src[j] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(src[j])
			}
		case c == q:
			return b.String(), j + 1, nil
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errAt(i, "unterminated string")
}
