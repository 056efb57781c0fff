package schema

import (
	"fmt"
	"slices"
	"strings"
)

var _ FieldType = selectType{}

// selectType picks from a fixed list of values. Single: one value stored as
// TEXT ("" means null). Multiple: an array of values (a single string is a
// one-element array), duplicates dropped in first-seen order, stored as a
// compact JSON array; output is always an array ([] for null).
type selectType struct{}

func (selectType) Name() string { return FieldSelect }

func (selectType) Column(*Field) Column { return ColText }

func (selectType) OptionKeys() []string { return []string{"values", "multiple", "max_select"} }

func (selectType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{Values: o.Values, Multiple: o.Multiple, MaxSelect: o.MaxSelect}
	if len(o.Values) == 0 {
		return "values cannot be empty"
	}
	seen := make(map[string]bool, len(o.Values))
	for _, v := range o.Values {
		if v == "" {
			return "values cannot contain an empty value"
		}
		if seen[v] {
			return fmt.Sprintf("values: %q is listed twice", v)
		}
		seen[v] = true
	}
	return cleanMaxSelect(&f.Options)
}

func (selectType) Normalize(f *Field, in any) (any, string) {
	if !f.Multiple {
		switch s := in.(type) {
		case nil:
			return nil, ""
		case string:
			if s == "" {
				return nil, ""
			}
			if !slices.Contains(f.Values, s) {
				return nil, fmt.Sprintf("must be one of %s", strings.Join(f.Values, ", "))
			}
			return s, ""
		}
		return nil, "must be a string"
	}
	if in == nil {
		return nil, ""
	}
	list, ok := stringListInput(in)
	if !ok {
		return nil, "must be an array of strings"
	}
	list = dedupe(list)
	for _, s := range list {
		if !slices.Contains(f.Values, s) {
			return nil, fmt.Sprintf("%q is not one of %s", s, strings.Join(f.Values, ", "))
		}
	}
	if f.MaxSelect > 0 && len(list) > f.MaxSelect {
		return nil, fmt.Sprintf("must have at most %d values", f.MaxSelect)
	}
	return encodeStringList(list), ""
}

func (selectType) IsZero(f *Field, stored any) bool {
	if f.Multiple {
		return isZeroList(stored)
	}
	return isZeroText(stored)
}

func (selectType) AppendJSON(buf []byte, f *Field, stored any) []byte {
	if f.Multiple {
		return appendStringList(buf, storedStringList(stored))
	}
	return appendStoredText(buf, stored)
}
