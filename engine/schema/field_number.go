package schema

import "strings"

var _ FieldType = numberType{}

// numberType is a finite float64, optionally whole and bounded. Numeric
// strings are accepted (trimmed); "" means null. Stored as REAL. As in
// PocketBase, 0 counts as blank for required.
type numberType struct{}

func (numberType) Name() string { return FieldNumber }

func (numberType) Column(*Field) Column { return ColReal }

func (numberType) OptionKeys() []string { return []string{"min", "max", "integer"} }

func (numberType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{Min: o.Min, Max: o.Max, Integer: o.Integer}
	return cleanValueBounds(&f.Options, false)
}

func (numberType) Normalize(f *Field, in any) (any, string) {
	var v float64
	switch x := in.(type) {
	case nil:
		return nil, ""
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, ""
		}
		n, ok := parseNumericString(x)
		if !ok {
			return nil, "must be a number"
		}
		v = n
	default:
		n, ok := numberInput(in)
		if !ok {
			return nil, "must be a number"
		}
		v = n
	}
	if !finite(v) {
		return nil, "must be a finite number"
	}
	if f.Integer && !whole(v) {
		return nil, "must be an integer"
	}
	if f.Min != nil && v < *f.Min {
		return nil, "must be at least " + formatFloat(*f.Min)
	}
	if f.Max != nil && v > *f.Max {
		return nil, "must be at most " + formatFloat(*f.Max)
	}
	if v == 0 {
		v = 0 // no negative zero
	}
	return v, ""
}

func (numberType) IsZero(_ *Field, stored any) bool {
	v, ok := storedNumber(stored)
	return !ok || v == 0
}

func (numberType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	v, ok := storedNumber(stored)
	if !ok {
		return append(buf, "null"...)
	}
	return appendFloat(buf, v)
}
