package totp_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"svcd/engine/totp"
)

var codeForm = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$`)

var testKey = bytes.Repeat([]byte{7}, 32)

func TestGenerateRecoveryCodes(t *testing.T) {
	codes, err := totp.GenerateRecoveryCodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) != totp.RecoveryCodeCount {
		t.Fatalf("%d codes, want %d", len(codes), totp.RecoveryCodeCount)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if !codeForm.MatchString(c) {
			t.Errorf("code %q not of the form XXXX-XXXX", c)
		}
		if n, ok := totp.NormalizeRecoveryCode(c); !ok || n != c {
			t.Errorf("generated code %q normalizes to %q, %v", c, n, ok)
		}
		if seen[c] {
			t.Errorf("duplicate code %q", c)
		}
		seen[c] = true
	}
	// Every symbol of the alphabet shows up over a few hundred codes.
	symbols := map[rune]bool{}
	for range 50 {
		more, _ := totp.GenerateRecoveryCodes()
		for _, c := range more {
			for _, r := range strings.ReplaceAll(c, "-", "") {
				symbols[r] = true
			}
		}
	}
	if len(symbols) != 32 {
		t.Errorf("%d distinct symbols in 4000 symbols, want 32", len(symbols))
	}
}

func TestNormalizeRecoveryCode(t *testing.T) {
	for in, want := range map[string]string{
		"ABCD-EFGH":     "ABCD-EFGH",
		"abcd-efgh":     "ABCD-EFGH",
		"abcdefgh":      "ABCD-EFGH",
		" ab cd-ef gh ": "ABCD-EFGH",
		"AB-CD-EF-GH":   "ABCD-EFGH",
		"oOiI-lL01":     "0011-1101",
		"0123-4567":     "0123-4567",
		"89XY-ZVTS":     "89XY-ZVTS",
	} {
		got, ok := totp.NormalizeRecoveryCode(in)
		if !ok || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "ABCD-EFG", "ABCD-EFGHJ", "ABCD_EFGH", "ABCU-EFGH", "ABCD-ÉFGH", "ABCD\tEFGH",
		"ABCD-EFGH\n", strings.Repeat(" ", 70) + "ABCDEFGH",
	} {
		if got, ok := totp.NormalizeRecoveryCode(in); ok {
			t.Errorf("Normalize(%q) = %q, want rejection", in, got)
		}
	}
}

func TestRecoveryHashAndMatch(t *testing.T) {
	codes, err := totp.GenerateRecoveryCodes()
	if err != nil {
		t.Fatal(err)
	}
	hashes := make([]string, len(codes))
	for i, c := range codes {
		if hashes[i], err = totp.HashRecoveryCode(testKey, c); err != nil {
			t.Fatal(err)
		}
		if len(hashes[i]) != 64 || strings.Contains(hashes[i], c) {
			t.Errorf("hash %q", hashes[i])
		}
	}
	for i, c := range codes {
		typed := strings.ToLower(strings.ReplaceAll(c, "-", ""))
		if j, ok := totp.MatchRecoveryCode(testKey, typed, hashes); !ok || j != i {
			t.Errorf("code %d (%q typed as %q): Match = %d, %v", i, c, typed, j, ok)
		}
	}
	// Single use is the caller's: once removed, a code no longer matches.
	rest := append([]string(nil), hashes[1:]...)
	if _, ok := totp.MatchRecoveryCode(testKey, codes[0], rest); ok {
		t.Error("removed code still matches")
	}
	// Another key, a malformed code or a garbled hash list match nothing.
	other := bytes.Repeat([]byte{8}, 32)
	if _, ok := totp.MatchRecoveryCode(other, codes[0], hashes); ok {
		t.Error("matched under another key")
	}
	if _, ok := totp.MatchRecoveryCode(testKey, "nope", hashes); ok {
		t.Error("malformed code matched")
	}
	if _, ok := totp.MatchRecoveryCode(testKey, codes[0], []string{"zz", "", strings.Repeat("0", 64)}); ok {
		t.Error("garbage hashes matched")
	}
	if _, err := totp.HashRecoveryCode(testKey[:15], codes[0]); err != totp.ErrRecoveryKey {
		t.Errorf("short key: %v", err)
	}
	if _, ok := totp.MatchRecoveryCode(testKey[:15], codes[0], hashes); ok {
		t.Error("short key matched")
	}
	if _, err := totp.HashRecoveryCode(testKey, "ABCD-EFG"); err == nil {
		t.Error("malformed code hashed")
	}
	// Equal normalized forms hash equally.
	a, _ := totp.HashRecoveryCode(testKey, "ABCD-EF01")
	b, _ := totp.HashRecoveryCode(testKey, "abcdefoi")
	if a != b {
		t.Error("hash depends on the typed form")
	}
}

// FuzzNormalizeRecoveryCode: whatever is typed, the normalizer never
// panics; what it accepts is canonical, stable, and forgiving of case and
// separators.
func FuzzNormalizeRecoveryCode(f *testing.F) {
	for _, s := range []string{"ABCD-EFGH", "abcdefgh", "oOiI-lL01", " ab cd-ef gh ", "ABCU-EFGH", "", "----", "ÀBCD-EFGH"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, ok := totp.NormalizeRecoveryCode(in)
		if !ok {
			if out != "" {
				t.Fatalf("rejected %q but returned %q", in, out)
			}
			return
		}
		if !codeForm.MatchString(out) {
			t.Fatalf("Normalize(%q) = %q, not XXXX-XXXX", in, out)
		}
		for _, variant := range []string{out, strings.ToLower(out), strings.ReplaceAll(out, "-", ""), " " + out + " "} {
			if again, ok := totp.NormalizeRecoveryCode(variant); !ok || again != out {
				t.Fatalf("Normalize(%q) = %q, %v; want %q (from %q)", variant, again, ok, out, in)
			}
		}
		stripped := strings.NewReplacer("-", "", " ", "").Replace(in)
		if len(stripped) != 8 {
			t.Fatalf("accepted %q with %d symbols", in, len(stripped))
		}
	})
}
