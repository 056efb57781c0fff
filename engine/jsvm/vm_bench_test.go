package jsvm

import (
	"context"
	"testing"

	"github.com/dop251/goja"
)

const benchCode = `record.title = record.title.trim(); if (record.title === "") helpers.abort("empty"); return record`

func benchVars(*goja.Runtime) map[string]any {
	return map[string]any{"record": map[string]any{"title": " a "}, "helpers": map[string]any{}}
}

// BenchmarkRunWarm is an invocation on a pooled runtime with the program
// cached: the cost every hook pays.
func BenchmarkRunWarm(b *testing.B) {
	vm := New(Options{})
	ctx := context.Background()
	for b.Loop() {
		if _, err := vm.Run(ctx, Invocation{Code: benchCode, Vars: benchVars}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunCold is the first invocation of new code on a new VM: a
// runtime made and the code compiled.
func BenchmarkRunCold(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		vm := New(Options{})
		if _, err := vm.Run(ctx, Invocation{Code: benchCode, Vars: benchVars}); err != nil {
			b.Fatal(err)
		}
	}
}
