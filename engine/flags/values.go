package flags

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Values in flags (variations, defaults, condition operands) are JSON.
// They are kept in canonical form: decoded with every number as a
// float64, encoded again compactly with object members sorted and HTML
// characters left alone. Equal values then have equal bytes, which is how
// a prerequisite compares what a flag serves with one of its variations.

// marshalCanonical encodes v compactly, without HTML escaping.
func marshalCanonical(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// decodeValue decodes one JSON value with numbers as float64; a number
// out of float64's range is an error.
func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return floatNumbers(v)
}

// floatNumbers turns every json.Number of v into a float64.
func floatNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("the number %s is out of range", x)
		}
		return f, nil
	case []any:
		for i, e := range x {
			n, err := floatNumbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	case map[string]any:
		for k, e := range x {
			n, err := floatNumbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	}
	return v, nil
}

// canonical is raw in canonical form, with its decoded value.
func canonical(raw []byte) (json.RawMessage, any, error) {
	v, err := decodeValue(raw)
	if err != nil {
		return nil, nil, err
	}
	b, err := marshalCanonical(v)
	return b, v, err
}

// number reads v as a number: any Go number (a context from code may hold
// int64), or a json.Number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// equal compares a context value a with an operand b (canonical: float64,
// string, bool, nil, []any, map[string]any): numbers by value, arrays
// element by element, objects member by member.
func equal(a, b any) bool {
	switch y := b.(type) {
	case string:
		x, ok := a.(string)
		return ok && x == y
	case float64:
		x, ok := number(a)
		return ok && x == y
	case bool:
		x, ok := a.(bool)
		return ok && x == y
	case nil:
		return a == nil
	case []any:
		x, ok := a.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		x, ok := a.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, yv := range y {
			xv, ok := x[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// compare orders a context value a against an operand b of the same kind
// (two numbers, or two strings compared byte by byte); ok is false when
// their kinds differ.
func compare(a, b any) (c int, ok bool) {
	switch y := b.(type) {
	case float64:
		x, ok := number(a)
		if !ok || math.IsNaN(x) {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		x, ok := a.(string)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// copyValue is a deep copy of a decoded value, so that code given a
// flag's value cannot change the snapshot's.
func copyValue(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	}
	return v
}
