package schema

import "testing"

func TestBoolNormalize(t *testing.T) {
	runNormalize(t, FieldBool, []normCase{
		{name: "nil is false", in: nil, want: int64(0)},
		{name: "true", in: true, want: int64(1)},
		{name: "false", in: false, want: int64(0)},
		{name: "string true", in: "true", want: int64(1)},
		{name: "string TRUE", in: " TRUE ", want: int64(1)},
		{name: "string false", in: "false", want: int64(0)},
		{name: "string 1", in: "1", want: int64(1)},
		{name: "string 0", in: "0", want: int64(0)},
		{name: "number 1", in: num("1"), want: int64(1)},
		{name: "number 0", in: num("0"), want: int64(0)},
		{name: "number 1.0", in: num("1.0"), want: int64(1)},
		{name: "int", in: 1, want: int64(1)},
		{name: "float", in: 0.0, want: int64(0)},
		{name: "number 2", in: num("2"), msg: "must be a boolean"},
		{name: "number half", in: 0.5, msg: "must be a boolean"},
		{name: "yes", in: "yes", msg: "must be a boolean"},
		{name: "empty string", in: "", msg: "must be a boolean"},
		{name: "array", in: []any{}, msg: "must be a boolean"},
		{name: "object", in: map[string]any{}, msg: "must be a boolean"},
	})
}

func TestBoolCleanOptions(t *testing.T) {
	runClean(t, FieldBool, []optCase{
		{name: "none", want: Options{}},
		{name: "all dropped", opts: allOptions(), want: Options{}},
	})
}

func TestBoolAppendJSON(t *testing.T) {
	runAppend(t, FieldBool, []outCase{
		{name: "one", stored: int64(1), want: `true`},
		{name: "zero", stored: int64(0), want: `false`},
		{name: "nil", stored: nil, want: `false`},
		{name: "other int", stored: int64(5), want: `true`},
		{name: "float", stored: 1.0, want: `true`},
		{name: "text true", stored: "true", want: `true`},
		{name: "text 1", stored: []byte("1"), want: `true`},
		{name: "text other", stored: "x", want: `false`},
		{name: "text 0", stored: "0", want: `false`},
	})
}

func TestBoolIsZero(t *testing.T) {
	runZero(t, FieldBool, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "false", stored: int64(0), want: true},
		{name: "true", stored: int64(1), want: false},
	})
}
