package csv

import (
	"strings"
	"testing"

	"svcd/engine/schema"
)

// csvFuzzFields are one field of each type a CSV import decodes, single
// and multiple where a type has both.
func csvFuzzFields() []*schema.Field {
	lo, hi := -1e6, 1e6
	return []*schema.Field{
		{Name: "t", Type: schema.FieldText},
		{Name: "e", Type: schema.FieldEditor},
		{Name: "m", Type: schema.FieldEmail},
		{Name: "u", Type: schema.FieldURL},
		{Name: "n", Type: schema.FieldNumber, Options: schema.Options{Min: &lo, Max: &hi}},
		{Name: "i", Type: schema.FieldNumber, Options: schema.Options{Integer: true}},
		{Name: "b", Type: schema.FieldBool},
		{Name: "d", Type: schema.FieldDate},
		{Name: "s", Type: schema.FieldSelect, Options: schema.Options{Values: []string{"x", "y", "z,w", `"q"`}}},
		{Name: "sm", Type: schema.FieldSelect, Options: schema.Options{Values: []string{"x", "y", "z,w", `"q"`}, Multiple: true}},
		{Name: "j", Type: schema.FieldJSON},
		{Name: "g", Type: schema.FieldGeoPoint},
		{Name: "r", Type: schema.FieldRelation, Options: schema.Options{Collection: "col_x"}},
		{Name: "rm", Type: schema.FieldRelation, Options: schema.Options{Collection: "col_x", Multiple: true}},
		{Name: "v", Type: schema.FieldVector, Options: schema.Options{Dimensions: 3}},
		{Name: "p", Type: schema.FieldPassword},
	}
}

// FuzzCSVCell feeds arbitrary cells to every field type's CSV decoding:
// decoding must never panic, and a cell the field accepts must round-trip:
// its stored value exported again decodes and validates to a value that
// exports to the same cell (export then import is a fixed point); and a
// text value never exports to a cell a spreadsheet would run as a formula.
func FuzzCSVCell(f *testing.F) {
	fields := csvFuzzFields()
	for i, cell := range []string{
		"", "hello", "a,b\n\"c\"", "12", "-0", "1e21", "1.5", "true", "FALSE", "0", "1700000000",
		"2024-02-29T12:00:00Z", "abc@example.com", "https://example.com/a?b=c", "x", `["x","z,w"]`, `[]`,
		`{"lon":1,"lat":-2.5}`, `[0.5,-1,2.25]`, `"just a string"`, `{"a":[1,{"b":null}]}`, `null`, `[1,2,3] x`,
		"abcdefghijklmno", `["abcdefghijklmno","bcdefghijklmnop"]`, " [1,2,3]", "\ufeff1", "NaN", "0x10",
	} {
		f.Add(uint8(i), cell)
	}
	f.Fuzz(func(t *testing.T, which uint8, cell string) {
		fd := fields[int(which)%len(fields)]
		typ, _ := schema.TypeOf(fd.Type)
		in, msg := decodeCSVCell(fd, cell)
		if msg != "" {
			return
		}
		stored, msg := schema.NormalizeValue(fd, in)
		if msg != "" || fd.Type == schema.FieldPassword {
			return // refused; a password is hashed and never exported
		}
		out, _ := appendCSVCell(nil, nil, fd, typ, stored)
		if _, text := stored.(string); text && fd.Type != schema.FieldJSON && len(out) > 0 && strings.IndexByte(csvFormulaChars, out[0]) >= 0 {
			t.Fatalf("%s: text %q exports %q, a formula to a spreadsheet", fd.Type, stored, out)
		}
		in2, msg := decodeCSVCell(fd, string(out))
		if msg != "" {
			t.Fatalf("%s: cell %q stored %#v exports %q, which does not decode: %s", fd.Type, cell, stored, out, msg)
		}
		stored2, msg := schema.NormalizeValue(fd, in2)
		if msg != "" {
			t.Fatalf("%s: cell %q stored %#v exports %q, which is refused: %s", fd.Type, cell, stored, out, msg)
		}
		again, _ := appendCSVCell(nil, nil, fd, typ, stored2)
		if string(again) != string(out) {
			t.Fatalf("%s: cell %q exports %q, re-imported exports %q", fd.Type, cell, out, again)
		}
	})
}
