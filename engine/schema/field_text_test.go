package schema

import (
	"strings"
	"testing"
)

func TestTextNormalize(t *testing.T) {
	bounded := Field{Options: Options{Min: ptr(3), Max: ptr(5)}}
	letters := Field{Options: Options{Pattern: `[a-z]+`}}
	alt := Field{Options: Options{Pattern: `a|b`}}
	for _, typ := range []string{FieldText, FieldEditor} {
		t.Run(typ, func(t *testing.T) {
			runNormalize(t, typ, []normCase{
				{name: "nil", in: nil, want: nil},
				{name: "string", in: "hello", want: "hello"},
				{name: "empty kept", in: "", want: ""},
				{name: "spaces kept", in: "  a  ", want: "  a  "},
				{name: "html", in: "<p>x</p>", want: "<p>x</p>"},
				{name: "number", in: num("1"), msg: "must be a string"},
				{name: "float", in: 1.5, msg: "must be a string"},
				{name: "bool", in: true, msg: "must be a string"},
				{name: "array", in: []any{"a"}, msg: "must be a string"},
				{name: "object", in: map[string]any{}, msg: "must be a string"},
				{name: "invalid utf8", in: "\xff", msg: "UTF-8"},
				{name: "too short", f: bounded, in: "ab", msg: "must be at least 3 characters"},
				{name: "min ok", f: bounded, in: "abc", want: "abc"},
				{name: "max ok", f: bounded, in: "abcde", want: "abcde"},
				{name: "too long", f: bounded, in: "abcdef", msg: "must be at most 5 characters"},
				{name: "runes not bytes", f: bounded, in: "ééééé", want: "ééééé"},
				{name: "runes too long", f: bounded, in: "éééééé", msg: "at most 5"},
				{name: "empty skips min", f: bounded, in: "", want: ""},
				{name: "pattern ok", f: letters, in: "abc", want: "abc"},
				{name: "pattern suffix", f: letters, in: "abc1", msg: "must match the pattern"},
				{name: "pattern prefix", f: letters, in: "1abc", msg: "must match the pattern"},
				{name: "pattern empty skipped", f: letters, in: "", want: ""},
				{name: "alternation anchored", f: alt, in: "ab", msg: "must match"},
				{name: "alternation ok", f: alt, in: "b", want: "b"},
			})
		})
	}
}

func TestTextCleanOptions(t *testing.T) {
	runClean(t, FieldText, []optCase{
		{name: "none", want: Options{}},
		{name: "bounds", opts: Options{Min: ptr(1), Max: ptr(10)}, want: Options{Min: ptr(1), Max: ptr(10)}},
		{name: "zero bounds dropped", opts: Options{Min: ptr(0), Max: ptr(0)}, want: Options{}},
		{name: "equal bounds", opts: Options{Min: ptr(4), Max: ptr(4)}, want: Options{Min: ptr(4), Max: ptr(4)}},
		{name: "min over max", opts: Options{Min: ptr(5), Max: ptr(4)}, msg: "min cannot be greater than max"},
		{name: "negative min", opts: Options{Min: ptr(-1)}, msg: "min must be a whole number"},
		{name: "negative max", opts: Options{Max: ptr(-1)}, msg: "max must be a whole number"},
		{name: "fractional", opts: Options{Max: ptr(1.5)}, msg: "max must be a whole number"},
		{name: "pattern", opts: Options{Pattern: `^\d+$`}, want: Options{Pattern: `^\d+$`}},
		{name: "bad pattern", opts: Options{Pattern: `(`}, msg: "pattern is not a valid regular expression"},
		{name: "flags", opts: Options{Searchable: true}, want: Options{Searchable: true}},
		{name: "encrypted", opts: Options{Encrypted: true}, want: Options{Encrypted: true}},
		{name: "searchable and encrypted", opts: Options{Searchable: true, Encrypted: true}, msg: "cannot both be set"},
		{name: "others dropped", opts: allOptions(), want: Options{Min: ptr(1), Max: ptr(5), Pattern: "a+", Searchable: true}},
	})
}

func TestEditorCleanOptions(t *testing.T) {
	runClean(t, FieldEditor, []optCase{
		{name: "encrypted dropped", opts: Options{Encrypted: true, Searchable: true}, want: Options{Searchable: true}},
		{name: "pattern", opts: Options{Pattern: "x"}, want: Options{Pattern: "x"}},
		{name: "bad pattern", opts: Options{Pattern: "[a"}, msg: "pattern"},
		{name: "min over max", opts: Options{Min: ptr(5), Max: ptr(4)}, msg: "min cannot be greater than max"},
		{name: "others dropped", opts: allOptions(), want: Options{Min: ptr(1), Max: ptr(5), Pattern: "a+", Searchable: true}},
	})
}

func TestTextAppendJSON(t *testing.T) {
	for _, typ := range []string{FieldText, FieldEditor, FieldEmail, FieldURL} {
		t.Run(typ, func(t *testing.T) {
			runAppend(t, typ, []outCase{
				{name: "nil", stored: nil, want: `null`},
				{name: "empty", stored: "", want: `""`},
				{name: "plain", stored: "hello", want: `"hello"`},
				{name: "escapes", stored: "a\"b\\c\nd\te\rf\x01", want: `"a\"b\\c\nd\te\rf\u0001"`},
				{name: "html kept", stored: "<b>&</b>", want: `"<b>&</b>"`},
				{name: "unicode", stored: "héllo ✓", want: `"héllo ✓"`},
				{name: "line separator", stored: "a\u2028b\u2029", want: `"a\u2028b\u2029"`},
				{name: "invalid utf8", stored: "a\xffb", want: `"a\ufffdb"`},
				{name: "bytes", stored: []byte("x"), want: `"x"`},
				{name: "int after type change", stored: int64(42), want: `"42"`},
				{name: "float after type change", stored: 1.5, want: `"1.5"`},
			})
		})
	}
}

func TestTextIsZero(t *testing.T) {
	runZero(t, FieldText, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "empty", stored: "", want: true},
		{name: "empty bytes", stored: []byte{}, want: true},
		{name: "space", stored: " ", want: false},
		{name: "text", stored: "x", want: false},
	})
}

func TestTextLongValue(t *testing.T) {
	f := &Field{Name: "f", Type: FieldText, Options: Options{Max: ptr(1000)}}
	if _, msg := NormalizeValue(f, strings.Repeat("é", 1000)); msg != "" {
		t.Fatalf("1000 runes: %q", msg)
	}
	if _, msg := NormalizeValue(f, strings.Repeat("é", 1001)); msg == "" {
		t.Fatal("1001 runes accepted")
	}
}
