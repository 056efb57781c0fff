package svcd_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestMakeFuzzNamesEveryTarget: `make fuzz` runs each fuzz target by name
// and package. `go test -fuzz` with a name that matches nothing in the
// package passes with a warning, so a target that moved with its code
// would silently stop being fuzzed. Every line must name a target in its
// package, and every target of the tree must have its line.
func TestMakeFuzzNamesEveryTarget(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`\$\(call fuzz1,\^?(Fuzz\w+)\$?\$?,(\./[^)\s]*)\)`)
	listed := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(mk), -1) {
		listed[filepath.Clean(m[2])+"."+m[1]] = true
	}
	if len(listed) == 0 {
		t.Fatal("no -fuzz lines found in the Makefile")
	}
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			found[filepath.Dir(path)+"."+m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for k := range listed {
		if !found[k] {
			problems = append(problems, "make fuzz runs "+k+", which does not exist (moved?)")
		}
	}
	for k := range found {
		if !listed[k] {
			problems = append(problems, "fuzz target "+k+" has no line in make fuzz")
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}
