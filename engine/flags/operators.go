package flags

import (
	"regexp"
	"strings"
)

// The attribute test operators of SPEC.md. A test reads one attribute of
// the flat context; an attribute that is absent fails every test except
// exists (with value false), neq and not_in, which are the negations of
// eq and in.

// opCode is an operator.
type opCode uint8

const (
	opEq opCode = iota + 1
	opNeq
	opIn
	opNotIn
	opContains
	opStartsWith
	opEndsWith
	opGt
	opGte
	opLt
	opLte
	opBetween
	opExists
	opRegex
)

// operatorList names the operators, for error messages.
const operatorList = "eq, neq, in, not_in, contains, starts_with, ends_with, gt, gte, lt, lte, between, exists, regex"

// Limits of operands.
const (
	maxInValues  = 10000
	maxRegexLen  = 1024
	maxAttrBytes = 256
)

// opByName finds the operator called name.
func opByName(name string) (opCode, bool) {
	switch name {
	case "eq":
		return opEq, true
	case "neq":
		return opNeq, true
	case "in":
		return opIn, true
	case "not_in":
		return opNotIn, true
	case "contains":
		return opContains, true
	case "starts_with":
		return opStartsWith, true
	case "ends_with":
		return opEndsWith, true
	case "gt":
		return opGt, true
	case "gte":
		return opGte, true
	case "lt":
		return opLt, true
	case "lte":
		return opLte, true
	case "between":
		return opBetween, true
	case "exists":
		return opExists, true
	case "regex":
		return opRegex, true
	}
	return 0, false
}

// operandProblem says what is wrong with operand v of op (present: the
// condition has a value member), or "".
func operandProblem(op opCode, v any, present bool) string {
	if !present && op != opExists {
		return "is required"
	}
	switch op {
	case opIn, opNotIn:
		l, ok := v.([]any)
		if !ok {
			return "must be an array of values"
		}
		if len(l) > maxInValues {
			return "holds more than 10000 values"
		}
	case opContains:
		switch v.(type) {
		case string, float64, bool:
		default:
			return "must be a string, a number or a boolean"
		}
	case opStartsWith, opEndsWith:
		if _, ok := v.(string); !ok {
			return "must be a string"
		}
	case opGt, opGte, opLt, opLte:
		switch v.(type) {
		case string, float64:
		default:
			return "must be a number or a string"
		}
	case opBetween:
		l, ok := v.([]any)
		if !ok || len(l) != 2 {
			return "must be [low, high]: two numbers or two strings"
		}
		c, ok := compare(l[0], l[1])
		if !ok {
			return "must be [low, high]: two numbers or two strings"
		}
		if c > 0 {
			return "low must not be above high"
		}
	case opExists:
		if _, ok := v.(bool); present && !ok {
			return "must be true or false (or absent: true)"
		}
	case opRegex:
		s, ok := v.(string)
		if !ok {
			return "must be a regular expression (a string)"
		}
		if len(s) > maxRegexLen {
			return "is longer than 1024 bytes"
		}
		if _, err := regexp.Compile(s); err != nil {
			return "is not a valid regular expression: " + err.Error()
		}
	}
	return ""
}

// attrTest is a compiled {attr, op, value}.
type attrTest struct {
	attr string
	op   opCode
	// v is the operand (canonical), s and f its string or number form
	// where the operator uses one.
	v     any
	s     string
	f     float64
	isNum bool
	lo    any // between
	hi    any
	set   *valueSet
	re    *regexp.Regexp
	want  bool // exists
}

// newAttrTest compiles a checked test.
func newAttrTest(attr string, op opCode, v any, present bool) (*attrTest, error) {
	t := &attrTest{attr: attr, op: op, v: v}
	switch x := v.(type) {
	case string:
		t.s = x
	case float64:
		t.f, t.isNum = x, true
	}
	switch op {
	case opIn, opNotIn:
		l, _ := v.([]any)
		t.set = newValueSet(l)
	case opBetween:
		l, _ := v.([]any)
		t.lo, t.hi = l[0], l[1]
	case opExists:
		t.want = true
		if b, ok := v.(bool); present && ok {
			t.want = b
		}
	case opRegex:
		re, err := regexp.Compile(t.s)
		if err != nil {
			return nil, err
		}
		t.re = re
	}
	return t, nil
}

func (t *attrTest) match(ev *evaluation) bool {
	a, present := ev.attrs[t.attr]
	switch t.op {
	case opExists:
		return (present && a != nil) == t.want
	case opNeq:
		return !present || !equal(a, t.v)
	case opNotIn:
		return !present || !t.set.has(a)
	}
	if !present {
		return false
	}
	switch t.op {
	case opEq:
		return equal(a, t.v)
	case opIn:
		return t.set.has(a)
	case opContains:
		switch x := a.(type) {
		case string:
			s, ok := t.v.(string)
			return ok && strings.Contains(x, s)
		case []any:
			for _, e := range x {
				if equal(e, t.v) {
					return true
				}
			}
		}
		return false
	case opStartsWith:
		x, ok := a.(string)
		return ok && strings.HasPrefix(x, t.s)
	case opEndsWith:
		x, ok := a.(string)
		return ok && strings.HasSuffix(x, t.s)
	case opGt, opGte, opLt, opLte:
		c, ok := compare(a, t.v)
		if !ok {
			return false
		}
		switch t.op {
		case opGt:
			return c > 0
		case opGte:
			return c >= 0
		case opLt:
			return c < 0
		}
		return c <= 0
	case opBetween:
		lo, ok1 := compare(a, t.lo)
		hi, ok2 := compare(a, t.hi)
		return ok1 && ok2 && lo >= 0 && hi <= 0
	case opRegex:
		x, ok := a.(string)
		return ok && t.re.MatchString(x)
	}
	return false
}

// valueSet is the operand of in and not_in, indexed by kind: strings and
// numbers in maps, the rest (booleans, null, arrays, objects) in a list.
type valueSet struct {
	strs  map[string]struct{}
	nums  map[float64]struct{}
	other []any
}

func newValueSet(l []any) *valueSet {
	s := &valueSet{}
	for _, v := range l {
		switch x := v.(type) {
		case string:
			if s.strs == nil {
				s.strs = map[string]struct{}{}
			}
			s.strs[x] = struct{}{}
		case float64:
			if s.nums == nil {
				s.nums = map[float64]struct{}{}
			}
			s.nums[x] = struct{}{}
		default:
			s.other = append(s.other, v)
		}
	}
	return s
}

// has reports whether a is one of the set's values; an array a matches
// when any of its elements does.
func (s *valueSet) has(a any) bool {
	if l, ok := a.([]any); ok {
		for _, e := range l {
			if s.hasOne(e) {
				return true
			}
		}
		return false
	}
	return s.hasOne(a)
}

func (s *valueSet) hasOne(a any) bool {
	if x, ok := a.(string); ok {
		_, in := s.strs[x]
		return in
	}
	if f, ok := number(a); ok {
		_, in := s.nums[f]
		return in
	}
	for _, o := range s.other {
		if equal(a, o) {
			return true
		}
	}
	return false
}
