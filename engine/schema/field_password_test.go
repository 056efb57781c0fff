package schema

import (
	"strings"
	"testing"
)

func TestPasswordCleanOptions(t *testing.T) {
	runClean(t, FieldPassword, []optCase{
		{name: "none", want: Options{}},
		{name: "bounds", opts: Options{Min: ptr(8), Max: ptr(1024)}, want: Options{Min: ptr(8), Max: ptr(1024)}},
		{name: "max over cap", opts: Options{Max: ptr(1025)}, msg: "max cannot be more than 1024"},
		{name: "min over cap", opts: Options{Min: ptr(2000)}, msg: "min cannot be more than 1024"},
		{name: "negative", opts: Options{Min: ptr(-1)}, msg: "min must be a whole number"},
		{name: "min over max", opts: Options{Min: ptr(10), Max: ptr(8)}, msg: "min cannot be greater than max"},
		{name: "others dropped", opts: allOptions(), want: Options{Min: ptr(1), Max: ptr(5)}},
	})
}

func TestPasswordNormalize(t *testing.T) {
	bounded := Field{Options: Options{Min: ptr(8), Max: ptr(10)}}
	runNormalize(t, FieldPassword, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "empty", in: "", want: nil},
		{name: "plaintext returned", in: "s3cret pw", want: "s3cret pw"},
		{name: "untrimmed", in: " pw ", want: " pw "},
		{name: "number", in: num("12345678"), msg: "must be a string"},
		{name: "short", f: bounded, in: "1234567", msg: "must be at least 8 characters"},
		{name: "min edge", f: bounded, in: "12345678", want: "12345678"},
		{name: "runes", f: bounded, in: "éééééééééé", want: "éééééééééé"},
		{name: "long", f: bounded, in: "12345678901", msg: "must be at most 10 characters"},
		{name: "hard cap", in: strings.Repeat("x", 1025), msg: "must be at most 1024 characters"},
		{name: "at hard cap", in: strings.Repeat("x", 1024), want: strings.Repeat("x", 1024)},
		{name: "invalid utf8", in: "\xff\xfe", msg: "UTF-8"},
	})
}

func TestPasswordNeverEmitted(t *testing.T) {
	runAppend(t, FieldPassword, []outCase{
		{name: "hash", stored: "$argon2id$v=19$m=65536,t=1,p=4$abc$def", want: `null`},
		{name: "nil", stored: nil, want: `null`},
		{name: "bytes", stored: []byte("x"), want: `null`},
	})
	runZero(t, FieldPassword, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "hash", stored: "$argon2id$", want: false},
	})
}
