package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
)

// pbShape is one file of api/pbcompat/testdata/shapes (see its README).
type pbShape struct {
	Source string          `json:"source"`
	Exact  []string        `json:"exact"`
	Shape  json.RawMessage `json:"shape"`
}

// pbDate is PocketBase's date string (pb:tools/types/datetime.go).
var pbDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// checkPBShape compares an answer body with the shape file name: the same
// members, the same JSON types, PocketBase dates where the example has
// one, and the exact members equal.
func checkPBShape(t testing.TB, name string, body []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("pbcompat", "testdata", "shapes", name))
	if err != nil {
		t.Fatal(err)
	}
	var sh pbShape
	if err := json.Unmarshal(raw, &sh); err != nil || sh.Source == "" {
		t.Fatalf("shape %s: %v (a shape names its source)", name, err)
	}
	var want, got any
	if err := json.Unmarshal(sh.Shape, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: answer is not JSON: %s", name, body)
	}
	for _, p := range shapeDiff("", want, got) {
		t.Errorf("%s (%s): %s; answer: %s", name, sh.Source, p, body)
	}
	wm, _ := want.(map[string]any)
	gm, _ := got.(map[string]any)
	for _, k := range sh.Exact {
		if !reflect.DeepEqual(wm[k], gm[k]) {
			t.Errorf("%s: %s = %v, want %v; answer: %s", name, k, gm[k], wm[k], body)
		}
	}
}

// shapeDiff lists where got's shape differs from want's.
func shapeDiff(at string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", at, got)}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s missing", at, k))
				continue
			}
			out = append(out, shapeDiff(at+"."+k, wv, gv)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s is not in PocketBase's answer", at, k))
			}
		}
		slices.Sort(out)
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an array", at, got)}
		}
		if len(w) > 0 && len(g) > 0 {
			return shapeDiff(at+"[0]", w[0], g[0])
		}
		return nil
	case string:
		g, ok := got.(string)
		if !ok {
			return []string{fmt.Sprintf("%s: %v (%T), want a string", at, got, got)}
		}
		if pbDate.MatchString(w) && !pbDate.MatchString(g) {
			return []string{fmt.Sprintf("%s: %q is not a PocketBase date", at, g)}
		}
	case float64:
		if _, ok := got.(float64); !ok {
			return []string{fmt.Sprintf("%s: %v (%T), want a number", at, got, got)}
		}
	case bool:
		if _, ok := got.(bool); !ok {
			return []string{fmt.Sprintf("%s: %v (%T), want a bool", at, got, got)}
		}
	case nil:
		if got != nil {
			return []string{fmt.Sprintf("%s: %v, want null", at, got)}
		}
	}
	return nil
}
