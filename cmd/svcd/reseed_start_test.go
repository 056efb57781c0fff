package main

import "testing"

// TestJoinList: a reseeded node rejoins through --join first, then the
// URLs its repair recorded (which may name members started since), each
// URL once.
func TestJoinList(t *testing.T) {
	for _, c := range []struct {
		flag string
		more []string
		want string
	}{
		{"", nil, ""},
		{"http://a:8090", nil, "http://a:8090"},
		{"", []string{"http://b:8090"}, "http://b:8090"},
		{"http://a:8090/, http://b:8090", []string{"http://b:8090", "http://c:8090"}, "http://a:8090,http://b:8090,http://c:8090"},
		{" , ", []string{""}, ""},
	} {
		if got := joinList(c.flag, c.more); got != c.want {
			t.Errorf("joinList(%q, %q) = %q, want %q", c.flag, c.more, got, c.want)
		}
	}
}
