package schema

import (
	"encoding/json"
	"math"
	"testing"
)

func TestNumberNormalize(t *testing.T) {
	integer := Field{Options: Options{Integer: true}}
	bounded := Field{Options: Options{Min: ptr(1), Max: ptr(10)}}
	runNormalize(t, FieldNumber, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "json int", in: num("3"), want: 3.0},
		{name: "json float", in: num("1.5"), want: 1.5},
		{name: "json exp", in: num("2e3"), want: 2000.0},
		{name: "json negative", in: num("-7.25"), want: -7.25},
		{name: "negative zero", in: num("-0"), want: 0.0},
		{name: "float64", in: 2.5, want: 2.5},
		{name: "float32", in: float32(0.5), want: 0.5},
		{name: "int", in: 2, want: 2.0},
		{name: "int64", in: int64(-5), want: -5.0},
		{name: "uint8", in: uint8(9), want: 9.0},
		{name: "string", in: " 4.5 ", want: 4.5},
		{name: "string exp", in: "1e2", want: 100.0},
		{name: "string plus", in: "+3", want: 3.0},
		{name: "empty string", in: "", want: nil},
		{name: "blank string", in: "  ", want: nil},
		{name: "word", in: "abc", msg: "must be a number"},
		{name: "hex", in: "0x10", msg: "must be a number"},
		{name: "underscore", in: "1_000", msg: "must be a number"},
		{name: "nan string", in: "NaN", msg: "must be a number"},
		{name: "inf string", in: "Inf", msg: "must be a number"},
		{name: "bad json number", in: num("abc"), msg: "must be a number"},
		{name: "overflow", in: num("1e400"), msg: "must be a finite number"},
		{name: "overflow string", in: "-1e400", msg: "must be a finite number"},
		{name: "nan", in: math.NaN(), msg: "must be a finite number"},
		{name: "inf", in: math.Inf(1), msg: "must be a finite number"},
		{name: "bool", in: true, msg: "must be a number"},
		{name: "array", in: []any{num("1")}, msg: "must be a number"},
		{name: "object", in: map[string]any{}, msg: "must be a number"},
		{name: "integer ok", f: integer, in: num("2.0"), want: 2.0},
		{name: "integer big", f: integer, in: num("1e20"), want: 1e20},
		{name: "integer fraction", f: integer, in: num("2.5"), msg: "must be an integer"},
		{name: "min", f: bounded, in: num("0.5"), msg: "must be at least 1"},
		{name: "min edge", f: bounded, in: num("1"), want: 1.0},
		{name: "max edge", f: bounded, in: num("10"), want: 10.0},
		{name: "max", f: bounded, in: num("10.5"), msg: "must be at most 10"},
		{name: "fractional bound message", f: Field{Options: Options{Max: ptr(0.5)}}, in: 1, msg: "must be at most 0.5"},
	})
	ft, _ := TypeOf(FieldNumber)
	got, _ := ft.Normalize(&Field{}, num("-0"))
	if math.Signbit(got.(float64)) {
		t.Fatal("-0 stored with its sign")
	}
}

func TestNumberCleanOptions(t *testing.T) {
	runClean(t, FieldNumber, []optCase{
		{name: "none", want: Options{}},
		{name: "bounds", opts: Options{Min: ptr(-1.5), Max: ptr(0)}, want: Options{Min: ptr(-1.5), Max: ptr(0)}},
		{name: "integer", opts: Options{Integer: true}, want: Options{Integer: true}},
		{name: "min over max", opts: Options{Min: ptr(2), Max: ptr(1)}, msg: "min cannot be greater than max"},
		{name: "nan bound", opts: Options{Min: ptr(math.NaN())}, msg: "min must be a finite number"},
		{name: "others dropped", opts: allOptions(), want: Options{Min: ptr(1), Max: ptr(5), Integer: true}},
	})
}

func TestNumberAppendJSON(t *testing.T) {
	runAppend(t, FieldNumber, []outCase{
		{name: "nil", stored: nil, want: `null`},
		{name: "whole", stored: 3.0, want: `3`},
		{name: "zero", stored: 0.0, want: `0`},
		{name: "negative zero", stored: math.Copysign(0, -1), want: `0`},
		{name: "fraction", stored: 1.5, want: `1.5`},
		{name: "tenth", stored: 0.1, want: `0.1`},
		{name: "negative", stored: -42.0, want: `-42`},
		{name: "large whole", stored: 1e15, want: `1000000000000000`},
		{name: "larger whole", stored: 1e20, want: `100000000000000000000`},
		{name: "exp large", stored: 1e21, want: `1e+21`},
		{name: "small", stored: 0.000001, want: `0.000001`},
		{name: "exp small", stored: 1e-7, want: `1e-7`},
		{name: "exp small negative", stored: -1.5e-10, want: `-1.5e-10`},
		{name: "int64", stored: int64(7), want: `7`},
		{name: "numeric text", stored: "12.5", want: `12.5`},
		{name: "numeric bytes", stored: []byte("3"), want: `3`},
		{name: "text", stored: "abc", want: `null`},
		{name: "nan", stored: math.NaN(), want: `null`},
		{name: "inf", stored: math.Inf(-1), want: `null`},
	})
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	for _, v := range []float64{
		0, 1, -1, 0.1, 1.0 / 3, 2.5e-7, 1e-6, 9.99e-7, 123456789.125, 1e20, 1e21, 9.999e20,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -1e300, 4e15 + 0.5, 1 << 53,
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFloat(nil, v); string(got) != string(want) {
			t.Errorf("appendFloat(%v) = %s, encoding/json %s", v, got, want)
		}
		want32, _ := json.Marshal(float32(v))
		if math.Abs(v) <= math.MaxFloat32 {
			if got := appendFloatBits(nil, float64(float32(v)), 32); string(got) != string(want32) {
				t.Errorf("appendFloatBits(%v, 32) = %s, encoding/json %s", float32(v), got, want32)
			}
		}
	}
}

func TestNumberIsZero(t *testing.T) {
	runZero(t, FieldNumber, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "zero", stored: 0.0, want: true},
		{name: "int zero", stored: int64(0), want: true},
		{name: "value", stored: 0.5, want: false},
		{name: "negative", stored: -1.0, want: false},
		{name: "text", stored: "x", want: true},
	})
}
