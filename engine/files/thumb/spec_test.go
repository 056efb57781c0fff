package thumb

import "testing"

func TestParseSpec(t *testing.T) {
	ok := []struct {
		thumb, fit string
		want       Spec
	}{
		{"100x80", "", Spec{100, 80, Contain}},
		{"100x80_contain", "", Spec{100, 80, Contain}},
		{"100x80_cover", "", Spec{100, 80, Cover}},
		{"100x80_crop", "", Spec{100, 80, Cover}},
		{"100x80", "contain", Spec{100, 80, Contain}},
		{"100x80", "cover", Spec{100, 80, Cover}},
		{"100x80", "crop", Spec{100, 80, Cover}},
		{"1x1", "", Spec{1, 1, Contain}},
		{"4096x4096", "", Spec{4096, 4096, Contain}},
		{"0100x007", "", Spec{100, 7, Contain}},
		{"0x100", "", Spec{0, 100, Contain}},
		{"100x0_cover", "", Spec{100, 0, Cover}},
		{"000x10", "", Spec{0, 10, Contain}},
		// Clamped to 4096, whatever the length of the number.
		{"4097x10", "", Spec{4096, 10, Contain}},
		{"10x5000_cover", "", Spec{10, 4096, Cover}},
		{"99999999999999999999999999x1", "", Spec{4096, 1, Contain}},
		{"100000x100000", "crop", Spec{4096, 4096, Cover}},
	}
	for _, c := range ok {
		got, good := ParseSpec(c.thumb, c.fit)
		if !good || got != c.want {
			t.Errorf("ParseSpec(%q, %q) = %+v, %v; want %+v", c.thumb, c.fit, got, good, c.want)
		}
	}
	malformed := []struct{ thumb, fit string }{
		{"", ""}, {"", "cover"},
		{"0x0", ""}, {"000x000_cover", ""}, // one zero keeps the proportion; both is nothing
		{"-1x100", ""}, {"100x-1", ""}, {"+100x100", ""}, // signs
		{"abcx100", ""}, {"100xabc", ""}, {"1.5x2", ""}, {"1e3x10", ""}, {"0x10x10", ""},
		{"100", ""}, {"x100", ""}, {"100x", ""}, {"100X100", ""}, {"100*100", ""}, {" 100x100", ""}, {"100x100 ", ""},
		{"100x100_", ""}, {"100x100_fill", ""}, {"100x100_COVER", ""}, {"100x100_cover_crop", ""},
		{"100x100t", ""}, {"100x100f", ""}, {"100x100b", ""}, // PocketBase's suffixes are not ours
		{"100x100", "fill"}, {"100x100", "Cover"}, {"100x100", " cover"},
		{"100x100_cover", "cover"}, {"100x100_contain", "cover"}, // one way only
		{"١٠٠x١٠٠", ""}, // digits, but not ASCII
	}
	for _, c := range malformed {
		if got, good := ParseSpec(c.thumb, c.fit); good {
			t.Errorf("ParseSpec(%q, %q) = %+v, want malformed", c.thumb, c.fit, got)
		}
	}
}

func TestSpecString(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"100x80", ""}:         "100x80_contain",
		{"100x80_crop", ""}:    "100x80_cover",
		{"100x80", "cover"}:    "100x80_cover",
		{"5000x80", "contain"}: "4096x80_contain",
	} {
		s, _ := ParseSpec(in[0], in[1])
		if s.String() != want {
			t.Errorf("ParseSpec(%q, %q).String() = %q, want %q", in[0], in[1], s.String(), want)
		}
		if back, ok := ParseSpec(s.String(), ""); !ok || back != s {
			t.Errorf("%q does not parse back to %+v", s.String(), s)
		}
	}
}
