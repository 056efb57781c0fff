package flags

import (
	"encoding/json"
	"strings"
)

// Limits of a condition tree (docs/flags.md "Limits").
const (
	maxCondDepth = 32
	maxCondNodes = 2000
)

// condShapes is the message for something that is not a condition.
const condShapes = "must be a condition: {attr, op, value}, {all: [...]}, {any: [...]}, {not: {...}} or {segment: name}"

// condParser reads the condition trees of one flag or segment into p,
// counting their nodes.
type condParser struct {
	p     problems
	nodes int
}

// parse reads the condition at path (depth levels down); nil when it is
// wrong (the problem is recorded).
func (cp *condParser) parse(raw json.RawMessage, path string, depth int) *Condition {
	cp.nodes++
	if cp.nodes > maxCondNodes {
		if cp.nodes == maxCondNodes+1 {
			cp.p.add(path, "too many conditions: at most %d in one flag or segment", maxCondNodes)
		}
		return nil
	}
	if depth > maxCondDepth {
		cp.p.add(path, "conditions nest deeper than %d levels", maxCondDepth)
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		cp.p.add(path, condShapes)
		return nil
	}
	var shapes []string
	for _, k := range []string{"all", "any", "not", "segment"} {
		if _, ok := obj[k]; ok {
			shapes = append(shapes, k)
		}
	}
	attrShape := false
	for _, k := range []string{"attr", "op", "value"} {
		if _, ok := obj[k]; ok {
			attrShape = true
		}
	}
	if attrShape {
		shapes = append(shapes, "attr")
	}
	for k := range obj {
		switch k {
		case "all", "any", "not", "segment", "attr", "op", "value":
		default:
			cp.p.add(path+"."+k, "unknown member")
		}
	}
	switch {
	case len(shapes) == 0:
		cp.p.add(path, condShapes)
		return nil
	case len(shapes) > 1:
		cp.p.add(path, "mixes %s: a condition has one shape", strings.Join(shapes, ", "))
		return nil
	}
	switch shapes[0] {
	case "all", "any":
		var list []json.RawMessage
		if err := json.Unmarshal(obj[shapes[0]], &list); err != nil || list == nil {
			cp.p.add(path+"."+shapes[0], "must be an array of conditions")
			return nil
		}
		subs := make([]*Condition, 0, len(list))
		for i, r := range list {
			subs = append(subs, cp.parse(r, indexPath(path+"."+shapes[0], i), depth+1))
		}
		if shapes[0] == "all" {
			return &Condition{form: formAll, All: subs}
		}
		return &Condition{form: formAny, Any: subs}
	case "not":
		sub := cp.parse(obj["not"], path+".not", depth+1)
		return &Condition{form: formNot, Not: sub}
	case "segment":
		var name string
		if err := json.Unmarshal(obj["segment"], &name); err != nil {
			cp.p.add(path+".segment", "must be a segment's name")
			return nil
		}
		if msg := nameProblem(name); msg != "" {
			cp.p.add(path+".segment", "%s", msg)
			return nil
		}
		return &Condition{form: formSegment, Segment: name}
	}
	return cp.parseTest(obj, path)
}

// parseTest reads {attr, op, value}.
func (cp *condParser) parseTest(obj map[string]json.RawMessage, path string) *Condition {
	var attr, opName string
	if err := json.Unmarshal(obj["attr"], &attr); err != nil || attr == "" {
		cp.p.add(path+".attr", "must be the name of a context attribute")
		return nil
	}
	if len(attr) > maxAttrBytes {
		cp.p.add(path+".attr", "is longer than %d bytes", maxAttrBytes)
		return nil
	}
	if err := json.Unmarshal(obj["op"], &opName); err != nil || opName == "" {
		cp.p.add(path+".op", "is required: one of %s", operatorList)
		return nil
	}
	op, ok := opByName(opName)
	if !ok {
		cp.p.add(path+".op", "unknown operator %q: one of %s", opName, operatorList)
		return nil
	}
	raw, present := obj["value"]
	var v any
	var canon json.RawMessage
	if present {
		var err error
		canon, v, err = canonical(raw)
		if err != nil {
			cp.p.add(path+".value", "is not a JSON value: %v", err)
			return nil
		}
	}
	if msg := operandProblem(op, v, present); msg != "" {
		cp.p.add(path+".value", "%s", msg)
		return nil
	}
	return &Condition{form: formAttr, Attr: attr, Op: opName, Value: canon}
}
