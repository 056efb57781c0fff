package schema

import (
	"regexp"
	"testing"
)

// numericPattern is the grammar isNumericString implements by hand.
var numericPattern = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

func TestIsNumericStringMatchesItsGrammar(t *testing.T) {
	cases := []string{"", "+", "-", ".", "+.", "-.", "0", "00", "1.", ".5", "+.5", "-1.5e3", "1e", "1e+", "1e+5",
		"1E-07", "1.e5", ".e5", "e5", "1..2", "1.2.3", "١", "0x10", "1_000", " 1", "1 ", "Inf", "NaN", "--1", "+-1",
		"12345678901234567890", "1e999", "3.14159", ".0e0", "5.E+1", "1e5.0"}
	for _, c := range cases {
		if got, want := isNumericString(c), numericPattern.MatchString(c); got != want {
			t.Errorf("isNumericString(%q) = %v, the grammar says %v", c, got, want)
		}
	}
}

func FuzzIsNumericString(f *testing.F) {
	for _, s := range []string{"1", "-1.5e3", ".5", "1.", "e5", "+.e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isNumericString(s), numericPattern.MatchString(s); got != want {
			t.Fatalf("isNumericString(%q) = %v, the grammar says %v", s, got, want)
		}
	})
}
