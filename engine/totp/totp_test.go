package totp_test

import (
	"encoding/base32"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"svcd/engine/totp"
)

// oathtool computes codes independently (Debian package oathtool). Without
// it the test is skipped, unless CI is set (.ci/run installs it and sets
// CI=1), where it fails.
func oathtool(t *testing.T) func(secret string, at time.Time) string {
	t.Helper()
	bin, err := exec.LookPath("oathtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("oathtool not found (CI is set, so this peer is required): apt-get install -y oathtool")
		}
		t.Skip("oathtool not installed (set CI=1 to make this a failure): apt-get install -y oathtool")
	}
	return func(secret string, at time.Time) string {
		t.Helper()
		out, err := exec.Command(bin, "--totp=sha1", "--digits=6", "--time-step-size=30s", "--base32",
			"--now", at.UTC().Format("2006-01-02 15:04:05 UTC"), secret).CombinedOutput()
		if err != nil {
			t.Fatalf("oathtool: %v\n%s", err, out)
		}
		code := strings.TrimSpace(string(out))
		if len(code) != 6 {
			t.Fatalf("oathtool printed %q", out)
		}
		return code
	}
}

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

func TestCodesMatchOathtool(t *testing.T) {
	oath := oathtool(t)
	for _, s := range []string{
		"2026-01-01 00:00:00", "2026-01-01 00:00:29", "2026-01-01 00:00:30",
		"2026-01-01 00:00:59", "2026-06-30 12:34:56", "2038-01-19 03:14:08",
	} {
		now := at(s)
		want := oath(secret, now)
		got, err := totp.Code(secret, now)
		if err != nil || got != want {
			t.Errorf("%s: Code = %q, %v; oathtool says %q", s, got, err, want)
		}
		if !totp.Validate(want, secret, now) {
			t.Errorf("%s: oathtool's code %s not valid", s, want)
		}
	}
}

// The window is one step either side of the step containing now, and no
// more: a code of step k is accepted while now is in steps k-1, k, k+1.
func TestValidateWindowEdges(t *testing.T) {
	oath := oathtool(t)
	step0 := oath(secret, at("2026-01-01 00:00:29")) // step containing 00:00:00-00:00:29
	for _, tc := range []struct {
		now  string
		want bool
	}{
		{"2025-12-31 23:59:29", false}, // two steps before
		{"2025-12-31 23:59:30", true},  // first second of the step before
		{"2026-01-01 00:00:00", true},
		{"2026-01-01 00:00:29", true},
		{"2026-01-01 00:00:59", true},  // last second of the step after
		{"2026-01-01 00:01:00", false}, // two steps after
	} {
		if got := totp.Validate(step0, secret, at(tc.now)); got != tc.want {
			t.Errorf("code of 00:00:00 at %s: Validate = %v, want %v", tc.now, got, tc.want)
		}
	}

	now := at("2026-01-01 00:00:30")
	for _, tc := range []struct {
		offset time.Duration
		want   bool
	}{
		{-60 * time.Second, false},
		{-30 * time.Second, true},
		{0, true},
		{30 * time.Second, true},
		{60 * time.Second, false},
		{90 * time.Second, false},
	} {
		code := oath(secret, now.Add(tc.offset))
		counter, ok := totp.Match(code, secret, now)
		if ok != tc.want {
			t.Errorf("code of now%+v: Match ok = %v, want %v", tc.offset, ok, tc.want)
		}
		if ok && counter != totp.StepOf(now.Add(tc.offset)) {
			t.Errorf("code of now%+v: counter %d, want %d", tc.offset, counter, totp.StepOf(now.Add(tc.offset)))
		}
	}
}

func TestValidateDeterministicAndStrict(t *testing.T) {
	now := at("2026-01-01 00:00:30")
	code, err := totp.Code(secret, now)
	if err != nil {
		t.Fatal(err)
	}
	// The same inputs give the same answer whatever the wall clock says.
	for range 3 {
		if !totp.Validate(code, secret, now) {
			t.Fatal("Validate not deterministic")
		}
	}
	if !totp.Validate(code[:3]+" "+code[3:], secret, now) {
		t.Error(`"123 456" form refused`)
	}
	if !totp.Validate(code, strings.ToLower(secret), now) {
		t.Error("lower-case secret refused")
	}
	other := "0" + code[1:]
	if other == code {
		other = "1" + code[1:]
	}
	for _, bad := range []string{"", "12345", "1234567", "12345a", "-12345", other} {
		if totp.Validate(bad, secret, now) {
			t.Errorf("Validate(%q) = true", bad)
		}
	}
	if totp.Validate(code, "not base32!", now) {
		t.Error("malformed secret accepted")
	}
	if got := totp.StepOf(at("2026-01-01 00:00:30")); got != 1767225600/30+1 {
		t.Errorf("StepOf = %d", got)
	}
}

func TestGenerate(t *testing.T) {
	k, err := totp.Generate("Acme", "ada@example.test")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(k.Secret)
	if err != nil || len(raw) != totp.SecretSize {
		t.Fatalf("secret %q: %d bytes, %v", k.Secret, len(raw), err)
	}
	u, err := url.Parse(k.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/Acme:ada@example.test" ||
		q.Get("secret") != k.Secret || q.Get("issuer") != "Acme" || q.Get("algorithm") != "SHA1" ||
		q.Get("digits") != "6" || q.Get("period") != "30" {
		t.Errorf("otpauth URL %s", k.URL)
	}
	k2, _ := totp.Generate("Acme", "ada@example.test")
	if k2.Secret == k.Secret {
		t.Error("two secrets are equal")
	}
	for _, bad := range [][2]string{{"", "a"}, {"Acme", ""}, {"Ac:me", "a"}, {"Acme", "a:b"}} {
		if _, err := totp.Generate(bad[0], bad[1]); err == nil {
			t.Errorf("Generate(%q, %q) succeeded", bad[0], bad[1])
		}
	}

	// An authenticator (oathtool) and the server agree on a new secret.
	oath := oathtool(t)
	now := at("2026-03-04 05:06:07")
	if want := oath(k.Secret, now); !totp.Validate(want, k.Secret, now) {
		t.Errorf("oathtool's code %s for a generated secret refused", want)
	}
}
