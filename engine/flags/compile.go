package flags

import (
	"encoding/json"
	"fmt"
)

// Flags and segments are compiled once, when the snapshot takes them in
// (snapshot.go): operands decoded, regular expressions compiled, in
// lists indexed, variations resolved. Evaluation then only walks the
// compiled form.

// maxEvalDepth bounds how deep one evaluation goes through segments and
// prerequisites (writes refuse cycles; this only guards the evaluator
// against a state it was not given by them, such as a restored database).
const maxEvalDepth = 64

// value is a flag's value: its canonical JSON and its decoded form.
type value struct {
	raw json.RawMessage
	v   any
}

func newValue(raw json.RawMessage) (*value, error) {
	v, err := decodeValue(raw)
	if err != nil {
		return nil, err
	}
	return &value{raw: raw, v: v}, nil
}

// compiledFlag is a flag ready to evaluate.
type compiledFlag struct {
	flag  *Flag
	def   *value
	vars  map[string]*value
	rules []compiledRule
}

// compiledRule is a rule ready to evaluate.
type compiledRule struct {
	id, variation string
	val           *value
	when          matcher // nil: always
	rollout       bool
	threshold     uint64
	sticky        string
	prereqs       []Prerequisite
}

// compiledSegment is a segment ready to evaluate.
type compiledSegment struct {
	seg  *Segment
	cond matcher
}

// matcher is a compiled condition.
type matcher interface {
	match(ev *evaluation) bool
}

func compileFlag(f *Flag) (*compiledFlag, error) {
	cf := &compiledFlag{flag: f, vars: make(map[string]*value, len(f.Variations))}
	var err error
	if cf.def, err = newValue(f.DefaultValue); err != nil {
		return nil, err
	}
	for name, raw := range f.Variations {
		if cf.vars[name], err = newValue(raw); err != nil {
			return nil, err
		}
	}
	cf.rules = make([]compiledRule, len(f.Rules))
	for i, r := range f.Rules {
		cr := compiledRule{id: r.ID, variation: r.Variation, val: cf.vars[r.Variation], prereqs: r.Prerequisites}
		if cr.val == nil {
			return nil, fmt.Errorf("flag %s: rule %s serves the unknown variation %q", f.Key, r.ID, r.Variation)
		}
		if r.When != nil {
			if cr.when, err = compileCond(r.When); err != nil {
				return nil, fmt.Errorf("flag %s: rule %s: %w", f.Key, r.ID, err)
			}
		}
		if r.Rollout != nil {
			cr.rollout, cr.threshold, cr.sticky = true, threshold(r.Rollout.Value), r.Rollout.Sticky
		}
		cf.rules[i] = cr
	}
	return cf, nil
}

func compileSegment(s *Segment) (*compiledSegment, error) {
	m, err := compileCond(s.Conditions)
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", s.Name, err)
	}
	return &compiledSegment{seg: s, cond: m}, nil
}

// compileCond compiles a parsed condition tree.
func compileCond(c *Condition) (matcher, error) {
	if c == nil {
		return nil, fmt.Errorf("empty condition")
	}
	switch c.form {
	case formAll, formAny:
		list := c.All
		if c.form == formAny {
			list = c.Any
		}
		subs := make([]matcher, len(list))
		for i, sub := range list {
			m, err := compileCond(sub)
			if err != nil {
				return nil, err
			}
			subs[i] = m
		}
		if c.form == formAny {
			return anyOf(subs), nil
		}
		return allOf(subs), nil
	case formNot:
		m, err := compileCond(c.Not)
		if err != nil {
			return nil, err
		}
		return notOf{m}, nil
	case formSegment:
		return segmentRef(c.Segment), nil
	}
	op, ok := opByName(c.Op)
	if !ok {
		return nil, fmt.Errorf("unknown operator %q", c.Op)
	}
	var v any
	if c.Value != nil {
		var err error
		if v, err = decodeValue(c.Value); err != nil {
			return nil, err
		}
	}
	return newAttrTest(c.Attr, op, v, c.Value != nil)
}

// allOf holds when every condition holds (an empty one always).
type allOf []matcher

func (m allOf) match(ev *evaluation) bool {
	for _, s := range m {
		if !s.match(ev) {
			return false
		}
	}
	return true
}

// anyOf holds when one condition holds (an empty one never).
type anyOf []matcher

func (m anyOf) match(ev *evaluation) bool {
	for _, s := range m {
		if s.match(ev) {
			return true
		}
	}
	return false
}

// notOf holds when its condition does not.
type notOf struct{ m matcher }

func (m notOf) match(ev *evaluation) bool { return !m.m.match(ev) }

// segmentRef holds when the named segment's conditions hold; an unknown
// segment never does.
type segmentRef string

func (m segmentRef) match(ev *evaluation) bool {
	s := ev.snap.segs[string(m)]
	if s == nil || ev.depth >= maxEvalDepth {
		return false
	}
	ev.depth++
	ok := s.cond.match(ev)
	ev.depth--
	return ok
}
