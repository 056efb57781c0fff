package schema

import "strings"

var _ FieldType = boolType{}

// boolType is true or false, accepted as a JSON bool, "true"/"false"/"1"/"0"
// or the numbers 1 and 0. null stores false. Stored as INTEGER 0 or 1; false
// counts as blank for required (a required bool must be true).
type boolType struct{}

func (boolType) Name() string { return FieldBool }

func (boolType) Column(*Field) Column { return ColInteger }

func (boolType) OptionKeys() []string { return nil }

func (boolType) CleanOptions(f *Field, _ Lookup) string {
	f.Options = Options{}
	return ""
}

func (boolType) Normalize(_ *Field, in any) (any, string) {
	switch x := in.(type) {
	case nil:
		return int64(0), ""
	case bool:
		if x {
			return int64(1), ""
		}
		return int64(0), ""
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "1":
			return int64(1), ""
		case "false", "0":
			return int64(0), ""
		}
		return nil, "must be a boolean"
	}
	if v, ok := numberInput(in); ok {
		switch v {
		case 1:
			return int64(1), ""
		case 0:
			return int64(0), ""
		}
	}
	return nil, "must be a boolean"
}

func (boolType) IsZero(_ *Field, stored any) bool { return !storedBool(stored) }

func (boolType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	if storedBool(stored) {
		return append(buf, "true"...)
	}
	return append(buf, "false"...)
}

// storedBool reads a stored bool: non-zero numbers, "true" and "1" are true.
func storedBool(stored any) bool {
	switch v := stored.(type) {
	case bool:
		return v
	case string, []byte:
		s, _ := storedString(v)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "1":
			return true
		}
		return false
	}
	n, ok := storedNumber(stored)
	return ok && n != 0
}
