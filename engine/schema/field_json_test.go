package schema

import (
	"math"
	"testing"
)

func TestJSONNormalize(t *testing.T) {
	capped := Field{Options: Options{MaxSize: 8}}
	runNormalize(t, FieldJSON, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "object sorted", in: map[string]any{"b": num("1"), "a": "x"}, want: `{"a":"x","b":1}`},
		{name: "number verbatim", in: num("1.50"), want: `1.50`},
		{name: "big number verbatim", in: num("12345678901234567890"), want: `12345678901234567890`},
		{name: "exp verbatim", in: num("1E+2"), want: `1E+2`},
		{name: "array", in: []any{num("1"), "x", nil, true, map[string]any{}}, want: `[1,"x",null,true,{}]`},
		{name: "string", in: "hi", want: `"hi"`},
		{name: "empty string", in: "", want: `""`},
		{name: "html not escaped", in: "<a&b>", want: `"<a&b>"`},
		{name: "unicode", in: "é\n", want: `"é\n"`},
		{name: "bool", in: false, want: `false`},
		{name: "go float", in: 1.5, want: `1.5`},
		{name: "go int", in: 7, want: `7`},
		{name: "nested", in: map[string]any{"a": []any{map[string]any{"b": nil}}}, want: `{"a":[{"b":null}]}`},
		{name: "nan", in: math.NaN(), msg: "must be a JSON value"},
		{name: "bad number", in: num("abc"), msg: "must be a JSON value"},
		{name: "func", in: func() {}, msg: "must be a JSON value"},
		{name: "cap ok", f: capped, in: "abcdef", want: `"abcdef"`},
		{name: "over cap", f: capped, in: "abcdefg", msg: "must be at most 8 bytes"},
	})
}

func TestJSONCleanOptions(t *testing.T) {
	runClean(t, FieldJSON, []optCase{
		{name: "none", want: Options{}},
		{name: "max_size", opts: Options{MaxSize: 100, Encrypted: true}, want: Options{MaxSize: 100, Encrypted: true}},
		{name: "negative", opts: Options{MaxSize: -1}, msg: "max_size cannot be negative"},
		{name: "others dropped", opts: allOptions(), want: Options{MaxSize: 10}},
	})
}

func TestJSONAppendJSON(t *testing.T) {
	runAppend(t, FieldJSON, []outCase{
		{name: "nil", stored: nil, want: `null`},
		{name: "object", stored: `{"a":1}`, want: `{"a":1}`},
		{name: "verbatim", stored: `{"b":1.50,"a":[1E+2]}`, want: `{"b":1.50,"a":[1E+2]}`},
		{name: "bytes", stored: []byte(`[1,2]`), want: `[1,2]`},
		{name: "null text", stored: `null`, want: `null`},
		{name: "not json", stored: "plain text", want: `"plain text"`},
		{name: "empty text", stored: "", want: `""`},
		{name: "int", stored: int64(3), want: `3`},
		{name: "float", stored: 1.5, want: `1.5`},
		{name: "nan", stored: math.NaN(), want: `null`},
	})
}

func TestJSONIsZero(t *testing.T) {
	runZero(t, FieldJSON, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "null", stored: "null", want: true},
		{name: "empty string", stored: `""`, want: true},
		{name: "empty array", stored: "[]", want: true},
		{name: "empty object", stored: "{}", want: true},
		{name: "empty text", stored: "", want: true},
		{name: "zero", stored: "0", want: false},
		{name: "false", stored: "false", want: false},
		{name: "value", stored: `{"a":1}`, want: false},
	})
}
