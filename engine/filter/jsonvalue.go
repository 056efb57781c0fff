package filter

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// These helpers give the in-memory evaluator SQLite's view of JSON:
// json_extract and json_each values are numbers, strings, 1/0 for
// booleans, NULL, or the minified text of an array or object.

// jsonNode is a parsed JSON value that keeps object member order and the
// raw text of every value.
type jsonNode struct {
	raw  json.RawMessage
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*jsonNode
}

func parseJSON(raw []byte) (*jsonNode, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	n := &jsonNode{raw: raw}
	switch raw[0] {
	case '{':
		n.kind = 'o'
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.Token() // {
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, false
			}
			key, _ := t.(string)
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return nil, false
			}
			child, ok := parseJSON(v)
			if !ok {
				return nil, false
			}
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, child)
		}
	case '[':
		n.kind = 'a'
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, false
		}
		for _, it := range items {
			child, ok := parseJSON(it)
			if !ok {
				return nil, false
			}
			n.vals = append(n.vals, child)
		}
	case '"':
		n.kind = 's'
	case 't', 'f':
		n.kind = 'b'
	case 'n':
		n.kind = 'z'
	default:
		n.kind = 'n'
	}
	return n, true
}

// sqlValue is the value SQLite's json functions report for n.
func (n *jsonNode) sqlValue() any {
	switch n.kind {
	case 's':
		var s string
		json.Unmarshal(n.raw, &s)
		return s
	case 'n':
		f, err := strconv.ParseFloat(string(n.raw), 64)
		if err != nil {
			return nil
		}
		return f
	case 'b':
		if n.raw[0] == 't' {
			return float64(1)
		}
		return float64(0)
	case 'z':
		return nil
	}
	var b bytes.Buffer
	json.Compact(&b, n.raw)
	return b.String()
}

// at walks a path: digit segments index arrays, others are object keys
// (the first member with that key).
func (n *jsonNode) at(path []string) (*jsonNode, bool) {
	cur := n
	for _, seg := range path {
		switch {
		case cur.kind == 'a' && isAllDigits(seg):
			i, err := strconv.Atoi(seg)
			if err != nil || i >= len(cur.vals) {
				return nil, false
			}
			cur = cur.vals[i]
		case cur.kind == 'o' && !isAllDigits(seg):
			found := false
			for k, key := range cur.keys {
				if key == seg {
					cur, found = cur.vals[k], true
					break
				}
			}
			if !found {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return cur, true
}

// elements are json_each's values: members of an array or object, or the
// value itself for a scalar.
func (n *jsonNode) elements() []any {
	switch n.kind {
	case 'x': // missing
		return nil
	case 'a', 'o':
		out := make([]any, len(n.vals))
		for i, v := range n.vals {
			out[i] = v.sqlValue()
		}
		return out
	}
	return []any{n.sqlValue()}
}

// jsonElements parses a JSON array text into its element values.
func jsonElements(s string) ([]any, bool) {
	n, ok := parseJSON([]byte(s))
	if !ok || n.kind != 'a' {
		return nil, false
	}
	return n.elements(), true
}
