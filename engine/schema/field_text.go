package schema

import (
	"fmt"
	"unicode/utf8"
)

var _ FieldType = textType{}

// textType is plain text: a string with optional character bounds and a
// pattern the whole value must match. Stored as TEXT; "" is kept as "".
type textType struct{}

func (textType) Name() string { return FieldText }

func (textType) Column(*Field) Column { return ColText }

func (textType) OptionKeys() []string {
	return []string{"min", "max", "pattern", "searchable", "encrypted"}
}

func (textType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{
		Min:        o.Min,
		Max:        o.Max,
		Pattern:    o.Pattern,
		Searchable: o.Searchable,
		Encrypted:  o.Encrypted,
	}
	if msg := cleanTextOptions(&f.Options); msg != "" {
		return msg
	}
	return cleanSearchEncrypted(&f.Options)
}

func (textType) Normalize(f *Field, in any) (any, string) {
	return normalizeText(f, in)
}

func (textType) IsZero(_ *Field, stored any) bool { return isZeroText(stored) }

func (textType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	return appendStoredText(buf, stored)
}

// cleanTextOptions validates the character bounds and the pattern of a text
// or editor field.
func cleanTextOptions(o *Options) string {
	if msg := cleanCharBounds(o, 0); msg != "" {
		return msg
	}
	if o.Pattern != "" {
		if _, err := anchoredPattern(o.Pattern); err != nil {
			return "pattern is not a valid regular expression"
		}
	}
	return ""
}

// normalizeText checks a text or editor input: a string within the
// character bounds matching the pattern. "" skips the bounds and the pattern
// (required decides whether it is allowed).
func normalizeText(f *Field, in any) (any, string) {
	if in == nil {
		return nil, ""
	}
	s, ok := in.(string)
	if !ok {
		return nil, "must be a string"
	}
	if !utf8.ValidString(s) {
		return nil, "must be valid UTF-8 text"
	}
	if s == "" {
		return "", ""
	}
	if msg := checkCharBounds(&f.Options, s); msg != "" {
		return nil, msg
	}
	if f.Pattern != "" {
		re, err := anchoredPattern(f.Pattern)
		if err != nil || !re.MatchString(s) {
			return nil, "must match the pattern " + f.Pattern
		}
	}
	return s, ""
}

// checkCharBounds applies min and max, counted in characters, to s.
func checkCharBounds(o *Options, s string) string {
	n := utf8.RuneCountInString(s)
	if o.Min != nil && float64(n) < *o.Min {
		return fmt.Sprintf("must be at least %d characters", int64(*o.Min))
	}
	if o.Max != nil && float64(n) > *o.Max {
		return fmt.Sprintf("must be at most %d characters", int64(*o.Max))
	}
	return ""
}

// isZeroText reports whether a stored text value is empty.
func isZeroText(stored any) bool {
	switch v := stored.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []byte:
		return len(v) == 0
	}
	return false
}
