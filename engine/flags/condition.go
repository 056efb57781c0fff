package flags

import (
	"bytes"
	"encoding/json"
)

// form says which of CONTRACT.md's five shapes a condition has.
type form uint8

const (
	formAttr    form = iota // {attr, op, value}
	formAll                 // {all: [...]}
	formAny                 // {any: [...]}
	formNot                 // {not: cond}
	formSegment             // {segment: name}
)

// Condition is a node of a condition tree: an attribute test
// ({attr, op, value}), a combinator ({all: [...]}, {any: [...]},
// {not: cond}) or a reference to a named segment ({segment: name}).
// Conditions are built by the parser (parse_condition.go), which checks
// them; Value is canonical JSON, nil when the test has none (exists).
type Condition struct {
	Attr    string
	Op      string
	Value   json.RawMessage
	All     []*Condition
	Any     []*Condition
	Not     *Condition
	Segment string
	form    form
}

// MarshalJSON writes the condition in its one shape.
func (c *Condition) MarshalJSON() ([]byte, error) {
	switch c.form {
	case formAll:
		return member("all", nonNil(c.All))
	case formAny:
		return member("any", nonNil(c.Any))
	case formNot:
		return member("not", c.Not)
	case formSegment:
		return member("segment", c.Segment)
	}
	attr, err := marshalCanonical(c.Attr)
	if err != nil {
		return nil, err
	}
	op, err := marshalCanonical(c.Op)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"attr":`)
	b.Write(attr)
	b.WriteString(`,"op":`)
	b.Write(op)
	if c.Value != nil {
		b.WriteString(`,"value":`)
		b.Write(c.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// member writes the object {name: v}.
func member(name string, v any) ([]byte, error) {
	out, err := marshalCanonical(v)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(name)+len(out)+5)
	b = append(b, `{"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	b = append(b, out...)
	return append(b, '}'), nil
}

func nonNil(l []*Condition) []*Condition {
	if l == nil {
		return []*Condition{}
	}
	return l
}

// segments lists the segment names the tree references, with where, in
// tree order.
func (c *Condition) segments(path string, out []ref) []ref {
	if c == nil {
		return out
	}
	switch c.form {
	case formSegment:
		out = append(out, ref{Kind: refSegment, Name: c.Segment, Path: path + ".segment"})
	case formAll:
		for i, sub := range c.All {
			out = sub.segments(indexPath(path+".all", i), out)
		}
	case formAny:
		for i, sub := range c.Any {
			out = sub.segments(indexPath(path+".any", i), out)
		}
	case formNot:
		out = c.Not.segments(path+".not", out)
	}
	return out
}
