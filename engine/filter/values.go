package filter

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"

	"svcd/engine/schema"
)

// constOf turns a request or literal value into a constant: nil, float64,
// string or bool. Arrays and objects become their JSON text.
func constOf(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case []byte:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return string(b)
}

func literalConst(l *Literal) any {
	switch l.Kind {
	case LitString:
		return l.Str
	case LitNumber:
		return l.Num
	case LitBool:
		return l.Bool
	}
	return nil
}

// coerce converts a constant to the kind of what it is compared with, the
// same way for SQL and for the in-memory evaluator: numbers and booleans
// become numbers for number fields (a date string becomes unix seconds for
// date fields), numbers and booleans become text for text fields, and
// booleans become 1 or 0 otherwise (as SQLite and JSON extraction see them).
func coerce(k Kind, fieldType string, v any) any {
	switch x := v.(type) {
	case bool:
		switch k {
		case kindText:
			return strconv.FormatBool(x)
		}
		if x {
			return float64(1)
		}
		return float64(0)
	case float64:
		if k == kindText {
			return formatNumber(x)
		}
	case string:
		if k == kindNumber {
			if fieldType == schema.FieldDate || fieldType == schema.FieldAutodate || fieldType == "date_system" {
				if secs, ok := schema.ParseDate(x); ok {
					return float64(secs)
				}
			}
			if t := strings.TrimSpace(x); decimalPattern.MatchString(t) {
				if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) {
					return f
				}
			}
		}
	}
	return v
}

// decimalPattern is a plain decimal number, the only text coerced to a
// number (no hex, no infinities).
var decimalPattern = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// formatNumber prints a number as text the way the API prints it.
func formatNumber(f float64) string {
	if f == float64(int64(f)) && f < 1e15 && f > -1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// asciiLower lower-cases ASCII letters only, as SQLite's lower() does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// likePattern builds the LIKE pattern of `~`: a value holding % is used as
// written; otherwise it is escaped and wrapped in % (contains).
func likePattern(s string) string {
	if strings.Contains(s, "%") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}
