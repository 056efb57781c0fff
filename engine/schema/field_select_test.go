package schema

import "testing"

func TestSelectNormalizeSingle(t *testing.T) {
	f := Field{Options: Options{Values: []string{"a", "b", "c"}}}
	runNormalize(t, FieldSelect, []normCase{
		{name: "nil", f: f, in: nil, want: nil},
		{name: "empty", f: f, in: "", want: nil},
		{name: "value", f: f, in: "b", want: "b"},
		{name: "unknown", f: f, in: "d", msg: "must be one of a, b, c"},
		{name: "case sensitive", f: f, in: "A", msg: "must be one of"},
		{name: "number", f: f, in: num("1"), msg: "must be a string"},
		{name: "array", f: f, in: []any{"a"}, msg: "must be a string"},
	})
}

func TestSelectNormalizeMultiple(t *testing.T) {
	f := Field{Options: Options{Values: []string{"a", "b", "c", `q"t`}, Multiple: true}}
	capped := f
	capped.MaxSelect = 2
	runNormalize(t, FieldSelect, []normCase{
		{name: "nil", f: f, in: nil, want: nil},
		{name: "empty string", f: f, in: "", want: `[]`},
		{name: "empty array", f: f, in: []any{}, want: `[]`},
		{name: "array", f: f, in: []any{"a", "b"}, want: `["a","b"]`},
		{name: "order kept", f: f, in: []any{"c", "a"}, want: `["c","a"]`},
		{name: "single string", f: f, in: "a", want: `["a"]`},
		{name: "duplicates", f: f, in: []any{"b", "a", "b", "a"}, want: `["b","a"]`},
		{name: "go strings", f: f, in: []string{"c"}, want: `["c"]`},
		{name: "escaped", f: f, in: []any{`q"t`}, want: `["q\"t"]`},
		{name: "unknown", f: f, in: []any{"a", "d"}, msg: `"d" is not one of a, b, c`},
		{name: "empty element", f: f, in: []any{""}, msg: "is not one of"},
		{name: "non-string", f: f, in: []any{"a", num("1")}, msg: "must be an array of strings"},
		{name: "nested", f: f, in: []any{[]any{"a"}}, msg: "must be an array of strings"},
		{name: "object", f: f, in: map[string]any{"a": true}, msg: "must be an array of strings"},
		{name: "number", f: f, in: num("1"), msg: "must be an array of strings"},
		{name: "cap ok", f: capped, in: []any{"a", "b"}, want: `["a","b"]`},
		{name: "cap after dedupe", f: capped, in: []any{"a", "a", "b"}, want: `["a","b"]`},
		{name: "over cap", f: capped, in: []any{"a", "b", "c"}, msg: "must have at most 2 values"},
	})
}

func TestSelectCleanOptions(t *testing.T) {
	runClean(t, FieldSelect, []optCase{
		{name: "values", opts: Options{Values: []string{"a", "b"}}, want: Options{Values: []string{"a", "b"}}},
		{name: "no values", msg: "values cannot be empty"},
		{name: "empty value", opts: Options{Values: []string{"a", ""}}, msg: "empty value"},
		{name: "duplicate", opts: Options{Values: []string{"a", "a"}}, msg: `"a" is listed twice`},
		{name: "multiple", opts: Options{Values: []string{"a"}, Multiple: true, MaxSelect: 3},
			want: Options{Values: []string{"a"}, Multiple: true, MaxSelect: 3}},
		{name: "max_select dropped on single", opts: Options{Values: []string{"a"}, MaxSelect: 3},
			want: Options{Values: []string{"a"}}},
		{name: "negative max_select", opts: Options{Values: []string{"a"}, Multiple: true, MaxSelect: -1}, msg: "max_select cannot be negative"},
		{name: "others dropped", opts: allOptions(), want: Options{Values: []string{"a"}, Multiple: true, MaxSelect: 2}},
	})
}

func TestSelectAppendJSON(t *testing.T) {
	single := Field{Options: Options{Values: []string{"a"}}}
	multi := Field{Options: Options{Values: []string{"a"}, Multiple: true}}
	runAppend(t, FieldSelect, []outCase{
		{name: "single nil", f: single, stored: nil, want: `null`},
		{name: "single", f: single, stored: "a", want: `"a"`},
		{name: "single number", f: single, stored: int64(3), want: `"3"`},
		{name: "multi nil", f: multi, stored: nil, want: `[]`},
		{name: "multi empty text", f: multi, stored: "", want: `[]`},
		{name: "multi empty", f: multi, stored: `[]`, want: `[]`},
		{name: "multi", f: multi, stored: `["a","b"]`, want: `["a","b"]`},
		{name: "multi spaced", f: multi, stored: ` [ "a" , "b" ] `, want: `["a","b"]`},
		{name: "multi bytes", f: multi, stored: []byte(`["a"]`), want: `["a"]`},
		{name: "multi from single", f: multi, stored: "a", want: `["a"]`},
		{name: "multi odd elements", f: multi, stored: `[1,"x",null,{"a":1}]`, want: `["1","x"]`},
		{name: "multi number", f: multi, stored: int64(3), want: `["3"]`},
		{name: "multi trailing junk", f: multi, stored: `["a"] x`, want: `["[\"a\"] x"]`},
	})
}

func TestSelectIsZero(t *testing.T) {
	single := Field{Options: Options{Values: []string{"a"}}}
	multi := Field{Options: Options{Values: []string{"a"}, Multiple: true}}
	runZero(t, FieldSelect, []zeroCase{
		{name: "single nil", f: single, stored: nil, want: true},
		{name: "single empty", f: single, stored: "", want: true},
		{name: "single set", f: single, stored: "a", want: false},
		{name: "multi nil", f: multi, stored: nil, want: true},
		{name: "multi empty", f: multi, stored: `[]`, want: true},
		{name: "multi set", f: multi, stored: `["a"]`, want: false},
	})
}
