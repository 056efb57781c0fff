package auth

import (
	"slices"
	"testing"
)

func TestRedirectAllowed(t *testing.T) {
	for _, tc := range []struct {
		list []string
		uri  string
		want bool
	}{
		{nil, "https://anything.example/", true},
		{[]string{"*"}, "https://anything.example/", true},
		{[]string{"https://app.example.com/cb"}, "https://app.example.com/cb", true},
		{[]string{"https://app.example.com/cb"}, "https://app.example.com/cb2", false},
		{[]string{"https://app.example.com/cb"}, "https://app.example.com/", false},
		{[]string{"https://app.example.com/auth/*"}, "https://app.example.com/auth/github", true},
		{[]string{"https://app.example.com/auth/*"}, "https://app.example.com/authx", false},
		{[]string{"https://app.example.com*"}, "https://app.example.com.evil.example/", true}, // a prefix is a prefix: end it with "/"
		{[]string{"", " https://a.example/cb "}, "https://a.example/cb", true},
		{[]string{"myapp://cb"}, "myapp://cb", true},
	} {
		if got := redirectAllowed(tc.list, tc.uri); got != tc.want {
			t.Errorf("redirectAllowed(%q, %q) = %v, want %v", tc.list, tc.uri, got, tc.want)
		}
	}
}

func TestSplitList(t *testing.T) {
	for in, want := range map[string][]string{
		"":                      nil,
		"a, b ,c":               {"a", "b", "c"},
		"openid profile\temail": {"openid", "profile", "email"},
		`["x y","z"]`:           {"x y", "z"},
		`[not json`:             {"[not", "json"},
	} {
		if got := splitList(in); !slices.Equal(got, want) {
			t.Errorf("splitList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidChallenge(t *testing.T) {
	for s, want := range map[string]bool{
		"":                       false,
		string(make([]byte, 43)): false,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ":   true,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP":    false, // 42
		"abcdefghijklmnopqrstuvwxyz-._~0123456789ABCDE": true,
		"abcdefghijklmnopqrstuvwxyz+/=0123456789ABCDE":  false,
	} {
		if got := validChallenge(s); got != want {
			t.Errorf("validChallenge(%q) = %v, want %v", s, got, want)
		}
	}
	// RFC 7636, appendix B.
	if got := s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Errorf("s256 = %s", got)
	}
}
