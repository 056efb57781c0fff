package schema

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

var _ FieldType = dateType{}

// Dates are limited to years 0001 through 9999.
const (
	minUnix = -62135596800
	maxUnix = 253402300799
)

// dateType is a point in time, accepted as unix seconds (a whole number or
// a string of digits) or ISO 8601 text, and stored and returned as unix
// seconds (INTEGER). "" means null. min and max are unix seconds.
type dateType struct{}

func (dateType) Name() string { return FieldDate }

func (dateType) Column(*Field) Column { return ColInteger }

func (dateType) OptionKeys() []string { return []string{"min", "max"} }

func (dateType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{Min: o.Min, Max: o.Max}
	return cleanValueBounds(&f.Options, true)
}

func (dateType) Normalize(f *Field, in any) (any, string) {
	const bad = "must be unix seconds or an ISO 8601 date"
	var unix int64
	switch x := in.(type) {
	case nil:
		return nil, ""
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, ""
		}
		v, ok := ParseDate(x)
		if !ok {
			return nil, bad
		}
		unix = v
	case json.Number:
		if v, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			unix = v
			break
		}
		v, ok := numberInput(x)
		if !ok || !whole(v) || math.Abs(v) > maxUnix {
			return nil, bad
		}
		unix = int64(v)
	default:
		v, ok := numberInput(in)
		if !ok || !whole(v) || math.Abs(v) > maxUnix {
			return nil, bad
		}
		unix = int64(v)
	}
	if unix < minUnix || unix > maxUnix {
		return nil, "must be a date between years 1 and 9999"
	}
	if f.Min != nil && float64(unix) < *f.Min {
		return nil, "must not be before " + formatUnix(*f.Min)
	}
	if f.Max != nil && float64(unix) > *f.Max {
		return nil, "must not be after " + formatUnix(*f.Max)
	}
	return unix, ""
}

func (dateType) IsZero(_ *Field, stored any) bool { return isZeroText(stored) }

func (dateType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	return appendStoredUnix(buf, stored)
}

// ParseDate reads a date as the API accepts it: unix seconds written as
// digits (optionally signed), or ISO 8601 / RFC 3339 text ("2006-01-02",
// "2006-01-02 15:04:05", "2006-01-02T15:04:05Z", with an optional fraction
// and zone; no zone means UTC). It returns unix seconds, the fraction
// dropped.
func ParseDate(s string) (unix int64, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if isDigits(strings.TrimPrefix(s, "-")) {
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil && v >= minUnix && v <= maxUnix
	}
	s = strings.ToUpper(s) // RFC 3339 allows lowercase t and z
	// Layouts without a zone are read as UTC; a fraction of a second after
	// the seconds is accepted by every layout that has seconds, then dropped.
	for _, layout := range [...]string{
		time.RFC3339,
		"2006-01-02 15:04:05Z07:00",
		"2006-01-02T15:04:05",
		"2006-01-02 15:04:05",
		"2006-01-02T15:04Z07:00",
		"2006-01-02T15:04",
		"2006-01-02 15:04",
		"2006-01-02",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix(), true
		}
	}
	return 0, false
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formatUnix spells unix seconds as RFC 3339 UTC, for messages.
func formatUnix(v float64) string {
	return time.Unix(int64(v), 0).UTC().Format(time.RFC3339)
}

// appendStoredUnix appends a stored date as an integer of unix seconds,
// reading numbers and date text on a best-effort basis, or null.
func appendStoredUnix(buf []byte, stored any) []byte {
	switch v := stored.(type) {
	case int64:
		return strconv.AppendInt(buf, v, 10)
	case float64:
		if finite(v) && math.Abs(v) <= maxUnix {
			return strconv.AppendInt(buf, int64(v), 10)
		}
	case string, []byte:
		s, _ := storedString(v)
		if n, ok := ParseDate(s); ok {
			return strconv.AppendInt(buf, n, 10)
		}
		if f, ok := parseNumericString(s); ok && math.Abs(f) <= maxUnix {
			return strconv.AppendInt(buf, int64(f), 10)
		}
	}
	return append(buf, "null"...)
}
