package flags

import (
	"encoding/json"

	"svcd/engine"
)

// parseSegment reads and checks a segment ({name, conditions}: the body
// of POST /admin/flag-segments, or a stored definition with its name
// added).
func parseSegment(raw []byte) (*Segment, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	p := problems{}
	s := &Segment{}
	for k := range obj {
		switch k {
		case "name", "conditions", "created", "updated":
		default:
			p.add(k, "unknown member")
		}
	}
	if err := json.Unmarshal(obj["name"], &s.Name); err != nil {
		p.add("name", "is required: the segment's name")
	} else if msg := nameProblem(s.Name); msg != "" {
		p.add("name", "%s", msg)
	}
	if r, ok := obj["conditions"]; !ok || string(r) == "null" {
		p.add("conditions", "is required: %s", condShapes[len("must be "):])
	} else {
		cp := &condParser{p: p}
		s.Conditions = cp.parse(r, "conditions", 1)
	}
	for _, r := range s.refs() {
		if r.Name == s.Name {
			p.add(r.Path, "a segment cannot reference itself")
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// mergeSegment is the definition current becomes with the members of
// patch (a PATCH body).
func mergeSegment(current *Segment, patch []byte) ([]byte, error) {
	obj, err := decodeObject(patch)
	if err != nil {
		return nil, err
	}
	if r, ok := obj["name"]; ok {
		var n string
		if json.Unmarshal(r, &n) != nil || n != current.Name {
			return nil, engine.FieldError("name", "cannot be changed: create a segment under the new name and delete this one")
		}
	}
	merged := map[string]json.RawMessage{"name": mustJSON(current.Name)}
	if c, err := marshalCanonical(current.Conditions); err == nil {
		merged["conditions"] = c
	}
	for k, v := range obj {
		merged[k] = v
	}
	return json.Marshal(merged)
}

// mustJSON encodes a string.
func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
