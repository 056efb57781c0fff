package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPublicDirEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir, spa string
		wantDir  string
		wantSPA  bool
		err      string
	}{
		{"", "", "", false, ""},
		{dir, "", dir, false, ""},
		{dir, "1", dir, true, ""},
		{dir, "0", dir, false, ""},
		{dir, "yes", "", false, "SVC_PUBLIC_SPA: want 1 or 0"},
		{"", "1", "", false, "needs SVC_PUBLIC_DIR"},
		{filepath.Join(dir, "missing"), "", "", false, "no such file"},
		{file, "", "", false, "is not a folder"},
	}
	for _, c := range cases {
		t.Setenv("SVC_PUBLIC_DIR", c.dir)
		t.Setenv("SVC_PUBLIC_SPA", c.spa)
		d, spa, err := publicDirEnv()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %q: err %v, want %q", c.dir, c.spa, err, c.err)
			}
			continue
		}
		if err != nil || d != c.wantDir || spa != c.wantSPA {
			t.Errorf("%q %q: %q %v %v", c.dir, c.spa, d, spa, err)
		}
	}
}
