package filter

import (
	"errors"
	"strings"
	"unicode/utf8"

	"svcd/engine/schema"
	"svcd/fsm"
)

// ErrNeedsDatabase is returned by Eval for expressions that read other
// records (relations, back-relations, @collection): only the SQL back end
// can answer them.
var ErrNeedsDatabase = errors.New("filter: expression reads other records")

// Record is one record's stored values by field name (id, created,
// updated included): nil, int64, float64, string or []byte.
type Record map[string]any

// Eval evaluates e against one record in memory, with the semantics of
// CompileSQL: the differential test holds the two to the same answers.
func Eval(e Expr, base *Collection, rec Record, env *Env) (bool, error) {
	if env == nil {
		env = &Env{}
	}
	ev := &evaluator{base: base, rec: rec, env: env}
	return ev.expr(e)
}

type evaluator struct {
	base *Collection
	rec  Record
	env  *Env
}

// mval is an evaluated operand.
type mval struct {
	kind  Kind
	ftype string
	konst bool
	v     any
	multi bool
	elems []any
	each  bool
	json  *jsonNode // a value inside a JSON field, for ?= and :each
	guest bool      // a guest's @request.auth value (see guestVsNull)
}

func (m *mval) isNull() bool { return m.konst && m.v == nil }

func (ev *evaluator) expr(e Expr) (bool, error) {
	switch x := e.(type) {
	case *Logical:
		l, err := ev.expr(x.Left)
		if err != nil {
			return false, err
		}
		r, err := ev.expr(x.Right)
		if err != nil {
			return false, err
		}
		if x.Op == And {
			return l && r, nil
		}
		return l || r, nil
	case *Compare:
		return ev.compare(x)
	}
	return false, compileErr("unknown expression")
}

func (ev *evaluator) compare(cmp *Compare) (bool, error) {
	l, err := ev.operand(cmp.Left)
	if err != nil {
		return false, err
	}
	r, err := ev.operand(cmp.Right)
	if err != nil {
		return false, err
	}
	if r.multi {
		return false, compileErr("a multi-valued operand must be on the left of %s", cmp.Op)
	}
	if r.each {
		return false, compileErr(":each belongs on the left operand")
	}
	guestVsNull(&l.v, l.guest, r.isNull())
	guestVsNull(&r.v, r.guest, l.isNull())
	if r.konst && !l.konst {
		r.v = coerce(l.kind, l.ftype, r.v)
	}
	if l.konst && !r.konst {
		l.v = coerce(r.kind, r.ftype, l.v)
	}
	if l.konst && r.konst {
		l.v, r.v = coerce(kindAny, "", l.v), coerce(kindAny, "", r.v)
	}
	op := cmp.Op.Base
	if op == "~" || op == "!~" {
		if err := checkLike(cmp.Op, l.kind, r.kind, r.konst, r.v); err != nil {
			return false, err
		}
	}
	if cmp.Op.Any && !l.multi && l.json != nil {
		l.multi, l.elems = true, l.json.elements()
	}
	if !l.multi {
		if l.each {
			return false, compileErr(":each needs a multiple field")
		}
		return scalarTrue(l.v, l.isNull(), op, r), nil
	}
	switch {
	case cmp.Op.Any:
		for _, x := range l.elems {
			if scalarTrue(x, false, op, r) {
				return true, nil
			}
		}
		return false, nil
	case l.each && len(l.elems) == 0:
		return false, nil
	case len(l.elems) == 0:
		return scalarTrue(nil, false, op, r), nil
	}
	for _, x := range l.elems {
		if !scalarTrue(x, false, op, r) {
			return false, nil
		}
	}
	return true, nil
}

// scalarTrue is one comparison in SQL's terms where NULL counts as false;
// lNull tells that l is the null literal (see compiler.scalar).
func scalarTrue(l any, lNull bool, op string, r *mval) bool {
	rv := r.v
	switch op {
	case "=", "!=":
		var eq bool
		switch {
		case r.isNull():
			eq = l == nil
		case lNull:
			eq = rv == nil
		default:
			eq = sqlIs(emptyIfNil(l), emptyIfNil(rv))
		}
		return eq == (op == "=")
	case ">", ">=", "<", "<=":
		c, ok := sqlCompare(l, rv)
		if !ok {
			return false
		}
		switch op {
		case ">":
			return c > 0
		case ">=":
			return c >= 0
		case "<":
			return c < 0
		}
		return c <= 0
	case "~", "!~":
		s, isText := l.(string)
		var pat string
		var havePat bool
		if r.konst {
			p, _ := rv.(string)
			pat, havePat = likePattern(p), true
		} else if p, ok := rv.(string); ok {
			pat, havePat = "%"+p+"%", true
		}
		if op == "~" {
			return isText && havePat && likeMatch(s, pat)
		}
		if !isText {
			return true
		}
		return havePat && !likeMatch(s, pat)
	}
	return false
}

func emptyIfNil(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// class orders SQLite storage classes: NULL < numbers < text < blob.
func class(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case float64:
		return 1
	case string:
		return 2
	}
	return 3
}

// sqlIs is SQL's IS: equal values of one class, or both NULL.
func sqlIs(a, b any) bool {
	if class(a) != class(b) {
		return false
	}
	switch x := a.(type) {
	case nil:
		return true
	case float64:
		return x == b.(float64)
	case string:
		return x == b.(string)
	}
	return false
}

// sqlCompare orders two non-NULL values as SQLite does (numbers, then text
// by bytes); ok is false when either is NULL.
func sqlCompare(a, b any) (int, bool) {
	ca, cb := class(a), class(b)
	if ca == 0 || cb == 0 {
		return 0, false
	}
	if ca != cb {
		if ca < cb {
			return -1, true
		}
		return 1, true
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		return strings.Compare(x, b.(string)), true
	}
	return 0, true
}

// likeMatch is SQLite's LIKE with ESCAPE '\': % any run, _ one character,
// ASCII letters match either case; a trailing escape matches nothing. Like
// SQLite it reads the value and the pattern only up to a NUL character.
func likeMatch(s, p string) bool {
	return likeFrom(beforeNUL(s), beforeNUL(p))
}

// beforeNUL cuts s at its first NUL, where SQLite's C-string functions stop.
func beforeNUL(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

func likeFrom(s, p string) bool {
	if p == "" {
		return s == ""
	}
	c, size := sqliteRune(p)
	switch c {
	case '%':
		rest := p[size:]
		for {
			if likeFrom(s, rest) {
				return true
			}
			if s == "" {
				return false
			}
			_, n := sqliteRune(s)
			s = s[n:]
		}
	case '_':
		if s == "" {
			return false
		}
		_, n := sqliteRune(s)
		return likeFrom(s[n:], p[size:])
	case '\\':
		if len(p) == size {
			return false
		}
		c, n := sqliteRune(p[size:])
		size += n
		n, ok := matchOne(s, c)
		return ok && likeFrom(s[n:], p[size:])
	}
	n, ok := matchOne(s, c)
	return ok && likeFrom(s[n:], p[size:])
}

// matchOne reports whether the first character of s is c (ASCII letters
// in either case) and how many bytes of s it takes.
func matchOne(s string, c rune) (int, bool) {
	if s == "" {
		return 0, false
	}
	r, n := sqliteRune(s)
	return n, foldASCII(r) == foldASCII(c)
}

// sqliteRune reads one character of s (not empty) the way SQLite's LIKE
// does (sqlite3Utf8Read), which differs from Go's decoder on malformed
// text: a byte below 0xc0 stands for itself (a stray continuation byte
// too); a lead byte takes its payload bits and every continuation byte
// that follows; an overlong form, a surrogate or U+FFFE/U+FFFF reads as
// U+FFFD.
func sqliteRune(s string) (rune, int) {
	c, i := uint32(s[0]), 1 // SQLite's u32: overlong runs wrap the same way
	if c < 0xc0 {
		return rune(c), 1
	}
	switch {
	case c < 0xe0:
		c &= 0x1f
	case c < 0xf0:
		c &= 0x0f
	case c < 0xf8:
		c &= 0x07
	case c < 0xfc:
		c &= 0x03
	case c < 0xfe:
		c &= 0x01
	default:
		c = 0
	}
	for i < len(s) && s[i]&0xc0 == 0x80 {
		c = c<<6 + uint32(s[i]&0x3f)
		i++
	}
	if c < 0x80 || c&^0x7ff == 0xd800 || c&^1 == 0xfffe {
		c = 0xfffd
	}
	return rune(c), i
}

func foldASCII(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 32
	}
	return r
}

// norm turns a stored value into the evaluator's value space.
func norm(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case bool:
		if x {
			return float64(1)
		}
		return float64(0)
	case []byte:
		return string(x)
	}
	return v
}

func (ev *evaluator) operand(o Operand) (*mval, error) {
	switch x := o.(type) {
	case *Literal:
		return &mval{kind: kindAny, konst: true, v: literalConst(x)}, nil
	case *Macro:
		return &mval{kind: kindNumber, konst: true, v: macroValue(x.Name, ev.env.Now)}, nil
	case *Request:
		return ev.request(x)
	case *Field:
		m, err := ev.field(x.Path)
		if err != nil {
			return nil, err
		}
		return ev.modify(m, x.Mods)
	case *CollectionRef:
		return nil, ErrNeedsDatabase
	case *Call:
		return ev.call(x)
	}
	return nil, compileErr("unknown operand")
}

func (ev *evaluator) request(x *Request) (*mval, error) {
	v, present, err := requestValue(x, ev.env)
	if err != nil {
		return nil, err
	}
	if x.Mods.Has("changed") {
		if len(x.Path) != 2 || x.Path[0] != "body" {
			return nil, compileErr(":changed applies to @request.body.<field>")
		}
		if len(x.Mods) != 1 {
			return nil, compileErr(":changed cannot be combined with other modifiers")
		}
		if !present {
			return &mval{kind: kindAny, konst: true, v: false}, nil
		}
		f := ev.base.Field(x.Path[1])
		if f == nil || f.Private {
			return &mval{kind: kindAny, konst: true, v: true}, nil
		}
		val := coerce(kindOf(f.Type), f.Type, constOf(v))
		changed := !sqlIs(norm(ev.rec[f.Name]), val)
		return &mval{kind: kindNumber, v: map[bool]float64{true: 1, false: 0}[changed]}, nil
	}
	o, err := modifyConst(constOf(v), present, isGuestAuth(x, ev.env), x.Mods)
	if err != nil {
		return nil, err
	}
	return &mval{kind: o.kind, konst: true, v: o.val, guest: o.guest}, nil
}

func (ev *evaluator) field(path []string) (*mval, error) {
	if len(path) > maxPathDepth {
		return nil, compileErr("path %q is deeper than %d", strings.Join(path, "."), maxPathDepth)
	}
	f := ev.base.Field(path[0])
	if f == nil {
		if _, _, ok := viaName(path[0]); ok {
			return nil, ErrNeedsDatabase
		}
		return nil, compileErr("unknown field %q", path[0])
	}
	if msg := ev.env.unreadable(f, path[0]); msg != "" {
		return nil, compileErr("%s", msg)
	}
	v := norm(ev.rec[f.Name])
	switch {
	case len(path) == 1 && f.Multiple:
		m := &mval{kind: kindText, ftype: f.Type, multi: true}
		if s, ok := v.(string); ok {
			m.elems, _ = jsonElements(s)
		}
		return m, nil
	case len(path) == 1:
		return &mval{kind: kindOf(f.Type), ftype: f.Type, v: v}, nil
	case f.Type == schema.FieldJSON || f.Type == schema.FieldGeoPoint:
		m := &mval{kind: kindJSON, ftype: schema.FieldJSON}
		if s, ok := v.(string); ok {
			if root, ok := parseJSON([]byte(s)); ok {
				if n, ok := root.at(path[1:]); ok {
					m.v, m.json = n.sqlValue(), n
				}
			}
		}
		if m.json == nil {
			m.json = &jsonNode{kind: 'x'} // missing: no elements
		}
		return m, nil
	case f.Type == schema.FieldRelation:
		return nil, ErrNeedsDatabase
	}
	return nil, compileErr("field %q has no member %q", path[0], path[1])
}

func (ev *evaluator) modify(m *mval, mods Modifiers) (*mval, error) {
	for _, mod := range mods {
		switch mod {
		case "lower":
			if m.kind == kindNumber {
				return nil, compileErr(":lower needs a text field")
			}
			lower := func(v any) any {
				if s, ok := v.(string); ok {
					return asciiLower(s)
				}
				return nil
			}
			if m.multi {
				for i, x := range m.elems {
					m.elems[i] = lower(x)
				}
			} else {
				m.v = lower(m.v)
			}
			m.kind, m.json = kindText, nil
		case "length":
			switch {
			case m.multi:
				m.v = float64(len(m.elems))
				m.multi, m.elems = false, nil
			case m.kind == kindText:
				n := 0
				if s, ok := m.v.(string); ok {
					n = utf8.RuneCountInString(beforeNUL(s))
				}
				m.v = float64(n)
			case m.kind == kindJSON && m.json != nil:
				n := 0
				if m.json.kind == 'a' {
					n = len(m.json.vals)
				}
				m.v = float64(n)
			default:
				return nil, compileErr(":length needs text, a multiple field or a JSON array")
			}
			m.kind, m.ftype, m.json = kindNumber, schema.FieldNumber, nil
		case "each":
			if m.kind == kindJSON && m.json != nil && !m.multi {
				m.multi, m.elems = true, m.json.elements()
			}
			m.each = true
		default:
			return nil, compileErr(":%s does not apply to a field", mod)
		}
	}
	return m, nil
}

func (ev *evaluator) call(x *Call) (*mval, error) {
	vals := make([]any, len(x.Args))
	for i, a := range x.Args {
		m, err := ev.operand(a)
		if err != nil {
			return nil, err
		}
		if m.multi {
			return nil, compileErr("%s takes single values", x.Name)
		}
		if m.konst {
			want := kindNumber
			if x.Name == "strftime" && i == 0 {
				want = kindText
			}
			m.v = coerce(want, "", m.v)
		}
		vals[i] = m.v
	}
	switch x.Name {
	case "geoDistance":
		return &mval{kind: kindNumber, v: norm(fsm.GeoDistanceAny(vals[0], vals[1], vals[2], vals[3]))}, nil
	case "strftime":
		format := x.Args[0].(*Literal).Str
		if err := checkStrftime(format); err != nil {
			return nil, err
		}
		out := &mval{kind: kindText}
		if secs, ok := vals[1].(float64); ok {
			if s, err := fsm.Strftime(format, int64(secs)); err == nil {
				out.v = s
			}
		}
		return out, nil
	}
	return nil, compileErr("unknown function %q", x.Name)
}
