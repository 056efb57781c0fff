package schema

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// isNumericString reports whether s is what number and vector inputs given
// as text must look like: `[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`,
// a JSON number with an optional leading plus sign (a leading zero and a
// trailing dot allowed). Hand-written: a regexp here cost about 2% of a
// bulk create's CPU (docs/benchmarks.md).
func isNumericString(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intDigits := digitsAt(s, i)
	i += intDigits
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		fracDigits = digitsAt(s, i)
		i += fracDigits
	}
	if intDigits == 0 && fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := digitsAt(s, i)
		if exp == 0 {
			return false
		}
		i += exp
	}
	return i == len(s)
}

// digitsAt counts the ASCII digits of s from i.
func digitsAt(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '9' {
		n++
	}
	return n
}

// numberInput converts a numeric input (json.Number or any Go float or
// integer kind) to float64. ok is false for anything else. The result may be
// ±Inf when a json.Number overflows; callers check finiteness.
func numberInput(in any) (v float64, ok bool) {
	switch n := in.(type) {
	case json.Number:
		if !isNumericString(string(n)) {
			return 0, false
		}
		f, _ := strconv.ParseFloat(string(n), 64) // ErrRange gives ±Inf or 0
		return f, true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

// parseNumericString parses trimmed text as a number; ok is false when it
// is not a plain decimal number.
func parseNumericString(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if !isNumericString(s) {
		return 0, false
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f, true
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}

// whole reports whether v is a finite whole number.
func whole(v float64) bool {
	return finite(v) && v == math.Trunc(v)
}

// storedString returns a stored TEXT or BLOB value as a string.
func storedString(stored any) (string, bool) {
	switch s := stored.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	}
	return "", false
}

// storedNumber returns a stored value as float64, converting numeric text
// on a best-effort basis (a column may hold text after a type change).
func storedNumber(stored any) (float64, bool) {
	switch v := stored.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, finite(v)
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case string, []byte:
		s, _ := storedString(v)
		return parseNumericString(s)
	}
	if f, ok := numberInput(stored); ok && finite(f) {
		return f, true
	}
	return 0, false
}

// appendFloat appends v the way encoding/json prints a float64 (shortest
// representation, exponent only below 1e-6 or from 1e21), or null when v is
// not finite. Negative zero prints as 0.
func appendFloat(buf []byte, v float64) []byte {
	return appendFloatBits(buf, v, 64)
}

// appendFloatBits is appendFloat for 32- or 64-bit precision.
func appendFloatBits(buf []byte, v float64, bits int) []byte {
	if !finite(v) {
		return append(buf, "null"...)
	}
	if v == 0 {
		return append(buf, '0')
	}
	abs := math.Abs(v)
	format := byte('f')
	if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
		bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, v, format, -1, bits)
	if format == 'e' {
		// 1e-07 becomes 1e-7, as encoding/json prints it.
		n := len(buf)
		if n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

// formatFloat is appendFloat into a new string, for messages.
func formatFloat(v float64) string {
	return string(appendFloat(nil, v))
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Unlike encoding/json it does not
// escape <, > and &; invalid UTF-8 becomes U+FFFD.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '"', '\\':
				buf = append(buf, '\\', b)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			// Valid JSON, but not valid JavaScript; escape as encoding/json does.
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendStoredText appends a stored value as a JSON string: text as is,
// numbers in their JSON spelling, nil as null.
func appendStoredText(buf []byte, stored any) []byte {
	switch v := stored.(type) {
	case nil:
		return append(buf, "null"...)
	case string:
		return appendString(buf, v)
	case []byte:
		return appendString(buf, string(v))
	case int64:
		return appendString(buf, strconv.FormatInt(v, 10))
	case float64:
		if !finite(v) {
			return append(buf, "null"...)
		}
		return appendString(buf, formatFloat(v))
	case bool:
		return appendString(buf, strconv.FormatBool(v))
	}
	return append(buf, "null"...)
}

// appendStringList appends list as a JSON array of strings.
func appendStringList(buf []byte, list []string) []byte {
	buf = append(buf, '[')
	for i, s := range list {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, s)
	}
	return append(buf, ']')
}

// encodeStringList returns the compact JSON array text stored for a
// multiple select, relation or file field.
func encodeStringList(list []string) string {
	return string(appendStringList(nil, list))
}

// storedStringList decodes what a multiple field stores (a JSON array of
// strings) on a best-effort basis: nil and "" are empty, a JSON array keeps
// its strings and the text of its numbers, and any other text is a
// one-element list (a column that held a single value before a change).
func storedStringList(stored any) []string {
	switch v := stored.(type) {
	case nil:
		return nil
	case int64:
		return []string{strconv.FormatInt(v, 10)}
	case float64:
		if !finite(v) {
			return nil
		}
		return []string{formatFloat(v)}
	}
	s, ok := storedString(stored)
	if !ok {
		return nil
	}
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var raw []any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || dec.More() {
		return []string{s}
	}
	list := make([]string, 0, len(raw))
	for _, e := range raw {
		switch e := e.(type) {
		case string:
			list = append(list, e)
		case json.Number:
			list = append(list, e.String())
		}
	}
	return list
}

// stringListInput accepts a list input: an array of strings, or a single
// string as a one-element list. nil and "" are an empty list. ok is false
// for any other shape or for a non-string element.
func stringListInput(in any) (list []string, ok bool) {
	switch v := in.(type) {
	case nil:
		return nil, true
	case string:
		if v == "" {
			return []string{}, true
		}
		return []string{v}, true
	case []string:
		return v, true
	case []any:
		list = make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			list = append(list, s)
		}
		return list, true
	}
	return nil, false
}

// dedupe removes repeated strings, keeping the first occurrence of each.
func dedupe(list []string) []string {
	out := make([]string, 0, len(list))
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// isZeroList reports whether a stored multiple value holds no element.
func isZeroList(stored any) bool {
	return len(storedStringList(stored)) == 0
}

// AppendJSONString appends s as a JSON string (HTML characters unescaped).
func AppendJSONString(buf []byte, s string) []byte { return appendString(buf, s) }
