package csv

import (
	"testing"

	"svcd/engine/schema"
)

// TestCSVFormulaCells: a text that a spreadsheet would run as a formula
// (OWASP: it starts with =, +, -, @, a tab or a carriage return) is
// exported behind one `'`; a text that really starts with `'` before such
// a character gets one more; numbers, booleans and JSON are left alone;
// and every cell imports back to the value it came from.
func TestCSVFormulaCells(t *testing.T) {
	text := &schema.Field{Name: "t", Type: schema.FieldText}
	num := &schema.Field{Name: "n", Type: schema.FieldNumber}
	js := &schema.Field{Name: "j", Type: schema.FieldJSON}
	sel := &schema.Field{Name: "s", Type: schema.FieldSelect, Options: schema.Options{Values: []string{"-", "@x", "'=y", "ok"}}}
	cases := []struct {
		f      *schema.Field
		stored any
		cell   string
	}{
		{text, "=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
		{text, "+1", "'+1"},
		{text, "-5", "'-5"},
		{text, "@SUM(A1)", "'@SUM(A1)"},
		{text, "\t=1", "'\t=1"},
		{text, "\r=1", "'\r=1"},
		{text, "'=1", "''=1"},
		{text, "''+1", "'''+1"},
		{text, "'quoted", "'quoted"},
		{text, "'", "'"},
		{text, "a=1", "a=1"},
		{text, " =1", " =1"},
		{text, "plain", "plain"},
		{sel, "-", "'-"},
		{sel, "@x", "'@x"},
		{sel, "'=y", "''=y"},
		{sel, "ok", "ok"},
		{num, float64(-5), "-5"},
		{num, float64(-0.25), "-0.25"},
		{js, float64(-5), "-5"},
		{js, `"=1"`, `"=1"`},
		{js, `["=1"]`, `["=1"]`},
	}
	for _, c := range cases {
		typ, _ := schema.TypeOf(c.f.Type)
		out, _ := appendCSVCell(nil, nil, c.f, typ, c.stored)
		if string(out) != c.cell {
			t.Errorf("%s %#v exports %q, want %q", c.f.Type, c.stored, out, c.cell)
			continue
		}
		in, msg := decodeCSVCell(c.f, c.cell)
		if msg != "" {
			t.Errorf("%s cell %q does not decode: %s", c.f.Type, c.cell, msg)
			continue
		}
		back, msg := schema.NormalizeValue(c.f, in)
		if msg != "" {
			t.Errorf("%s cell %q is refused: %s", c.f.Type, c.cell, msg)
			continue
		}
		again, _ := appendCSVCell(nil, nil, c.f, typ, back)
		if string(again) != c.cell {
			t.Errorf("%s cell %q imports as %#v, which exports %q", c.f.Type, c.cell, back, again)
		}
	}
	// A cell written by hand with the prefix before a number imports as the
	// number; one with a quote before anything else keeps its quote.
	for cell, want := range map[string]string{"'-5": "-5", "'abc": "'abc", "'": "'", "''=1": "'=1", "'=1": "=1"} {
		in, _ := decodeCSVCell(text, cell)
		if in != want {
			t.Errorf("text cell %q imports as %#v, want %q", cell, in, want)
		}
	}
}
