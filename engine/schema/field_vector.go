package schema

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

var _ FieldType = vectorType{}

// maxDimensions is the largest vector length a field may declare.
const maxDimensions = 4096

// vectorType is a fixed-length array of float32 numbers. Stored as a BLOB
// of little-endian float32s (EncodeVector); returned as a JSON array of the
// shortest float32 spellings.
type vectorType struct{}

func (vectorType) Name() string { return FieldVector }

func (vectorType) Column(*Field) Column { return ColBlob }

func (vectorType) OptionKeys() []string { return []string{"dimensions"} }

func (vectorType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{Dimensions: o.Dimensions}
	if o.Dimensions < 1 || o.Dimensions > maxDimensions {
		return fmt.Sprintf("dimensions must be between 1 and %d", maxDimensions)
	}
	return ""
}

func (vectorType) Normalize(f *Field, in any) (any, string) {
	var vec []float32
	switch x := in.(type) {
	case nil:
		return nil, ""
	case []float32:
		vec = x
	case []float64:
		vec = make([]float32, len(x))
		for i, v := range x {
			if !fitsFloat32(v) {
				return nil, "must contain only finite float32 numbers"
			}
			vec[i] = float32(v)
		}
	case []any:
		vec = make([]float32, len(x))
		for i, e := range x {
			v, ok := numberInput(e)
			if !ok {
				return nil, "must be an array of numbers"
			}
			if !fitsFloat32(v) {
				return nil, "must contain only finite float32 numbers"
			}
			vec[i] = float32(v)
		}
	default:
		return nil, "must be an array of numbers"
	}
	if len(vec) != f.Dimensions {
		return nil, fmt.Sprintf("must have exactly %d numbers", f.Dimensions)
	}
	for _, v := range vec {
		if !fitsFloat32(float64(v)) {
			return nil, "must contain only finite float32 numbers"
		}
	}
	return EncodeVector(vec), ""
}

func (vectorType) IsZero(_ *Field, stored any) bool {
	vec, ok := storedVector(stored)
	return !ok || len(vec) == 0
}

func (vectorType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	vec, ok := storedVector(stored)
	if !ok {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i, v := range vec {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendFloatBits(buf, float64(v), 32)
	}
	return append(buf, ']')
}

// EncodeVector returns the stored form of a vector: its elements as
// little-endian IEEE 754 float32s, 4 bytes each.
func EncodeVector(vec []float32) []byte {
	b := make([]byte, 4*len(vec))
	for i, v := range vec {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// DecodeVector reads a stored vector; ok is false when the length of b is
// not a multiple of 4.
func DecodeVector(b []byte) (vec []float32, ok bool) {
	if len(b)%4 != 0 {
		return nil, false
	}
	vec = make([]float32, len(b)/4)
	for i := range vec {
		vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return vec, true
}

// fitsFloat32 reports whether v is finite and within float32 range.
func fitsFloat32(v float64) bool {
	return finite(v) && math.Abs(v) <= math.MaxFloat32
}

// storedVector reads a stored vector: a BLOB, or best effort a JSON array
// of numbers held as TEXT (for example after a type change).
func storedVector(stored any) ([]float32, bool) {
	switch v := stored.(type) {
	case []byte:
		return DecodeVector(v)
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, false
		}
		var nums []float64
		if json.Unmarshal([]byte(v), &nums) != nil {
			return nil, false
		}
		vec := make([]float32, len(nums))
		for i, n := range nums {
			if !fitsFloat32(n) {
				return nil, false
			}
			vec[i] = float32(n)
		}
		return vec, true
	}
	return nil, false
}
