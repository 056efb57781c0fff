package schema

import (
	"math"
	"testing"
)

func TestVectorCleanOptions(t *testing.T) {
	runClean(t, FieldVector, []optCase{
		{name: "missing", msg: "dimensions must be between 1 and 4096"},
		{name: "one", opts: Options{Dimensions: 1}, want: Options{Dimensions: 1}},
		{name: "max", opts: Options{Dimensions: 4096}, want: Options{Dimensions: 4096}},
		{name: "too many", opts: Options{Dimensions: 4097}, msg: "dimensions must be between 1 and 4096"},
		{name: "negative", opts: Options{Dimensions: -3}, msg: "dimensions"},
		{name: "others dropped", opts: allOptions(), want: Options{Dimensions: 3}},
	})
}

func TestVectorNormalize(t *testing.T) {
	f := Field{Options: Options{Dimensions: 3}}
	runNormalize(t, FieldVector, []normCase{
		{name: "nil", f: f, in: nil, want: nil},
		{name: "json numbers", f: f, in: []any{num("1"), num("0.5"), num("-2")}, want: EncodeVector([]float32{1, 0.5, -2})},
		{name: "mixed numbers", f: f, in: []any{1, 2.5, int64(3)}, want: EncodeVector([]float32{1, 2.5, 3})},
		{name: "float64s", f: f, in: []float64{0.1, 0.2, 0.3}, want: EncodeVector([]float32{0.1, 0.2, 0.3})},
		{name: "float32s", f: f, in: []float32{1, 2, 3}, want: EncodeVector([]float32{1, 2, 3})},
		{name: "short", f: f, in: []any{num("1"), num("2")}, msg: "must have exactly 3 numbers"},
		{name: "long", f: f, in: []any{num("1"), num("2"), num("3"), num("4")}, msg: "must have exactly 3 numbers"},
		{name: "empty", f: f, in: []any{}, msg: "must have exactly 3 numbers"},
		{name: "string element", f: f, in: []any{num("1"), "2", num("3")}, msg: "must be an array of numbers"},
		{name: "null element", f: f, in: []any{num("1"), nil, num("3")}, msg: "must be an array of numbers"},
		{name: "beyond float32", f: f, in: []any{num("1e39"), num("0"), num("0")}, msg: "finite float32"},
		{name: "json overflow", f: f, in: []any{num("1e400"), num("0"), num("0")}, msg: "finite float32"},
		{name: "nan", f: f, in: []float64{math.NaN(), 0, 0}, msg: "finite float32"},
		{name: "float32 inf", f: f, in: []float32{float32(math.Inf(1)), 0, 0}, msg: "finite float32"},
		{name: "comma list", f: f, in: "1,2,3", msg: "must be an array of numbers"},
		{name: "object", f: f, in: map[string]any{}, msg: "must be an array of numbers"},
	})
}

func TestVectorEncoding(t *testing.T) {
	b := EncodeVector([]float32{1, -2})
	want := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}
	if string(b) != string(want) {
		t.Fatalf("EncodeVector = % x, want % x", b, want)
	}
	vec, ok := DecodeVector(b)
	if !ok || len(vec) != 2 || vec[0] != 1 || vec[1] != -2 {
		t.Fatalf("DecodeVector = %v, %v", vec, ok)
	}
	if _, ok := DecodeVector([]byte{1, 2, 3}); ok {
		t.Fatal("DecodeVector accepted 3 bytes")
	}
}

func TestVectorAppendJSON(t *testing.T) {
	f := Field{Options: Options{Dimensions: 3}}
	nan := EncodeVector([]float32{float32(math.NaN()), float32(math.Inf(1))})
	runAppend(t, FieldVector, []outCase{
		{name: "nil", f: f, stored: nil, want: `null`},
		{name: "vector", f: f, stored: EncodeVector([]float32{1, 0.5, -2}), want: `[1,0.5,-2]`},
		{name: "shortest float32", f: f, stored: EncodeVector([]float32{0.1, 0.2, 1.0 / 3}), want: `[0.1,0.2,0.33333334]`},
		{name: "small", f: f, stored: EncodeVector([]float32{1e-7, -2.5e-10, 0}), want: `[1e-7,-2.5e-10,0]`},
		{name: "large", f: f, stored: EncodeVector([]float32{math.MaxFloat32, 1e21, 1e20}), want: `[3.4028235e+38,1e+21,100000000000000000000]`},
		{name: "non-finite", f: f, stored: nan, want: `[null,null]`},
		{name: "empty blob", f: f, stored: []byte{}, want: `[]`},
		{name: "odd blob", f: f, stored: []byte{1, 2, 3}, want: `null`},
		{name: "json text", f: f, stored: `[1, 2.5]`, want: `[1,2.5]`},
		{name: "bad text", f: f, stored: `abc`, want: `null`},
		{name: "number", f: f, stored: int64(1), want: `null`},
	})
	runZero(t, FieldVector, []zeroCase{
		{name: "nil", f: f, stored: nil, want: true},
		{name: "empty", f: f, stored: []byte{}, want: true},
		{name: "zero vector is a value", f: f, stored: EncodeVector([]float32{0, 0, 0}), want: false},
	})
}
