package jsvm

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"
)

func run(t *testing.T, vm *VM, code string, vars map[string]any, timeout time.Duration) (any, error) {
	t.Helper()
	return vm.Run(context.Background(), Invocation{
		Code:    code,
		Vars:    func(*goja.Runtime) map[string]any { return vars },
		Timeout: timeout,
	})
}

func TestRunReturnsTheResolvedValue(t *testing.T) {
	vm := New(Options{})
	got, err := run(t, vm, `const x = await 20; return {sum: x + input.n, names: [typeof record, typeof ctx.input]}`,
		map[string]any{"input": map[string]any{"n": 22}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := got.(map[string]any)
	if !ok || m["sum"] != int64(42) {
		t.Fatalf("got %#v", got)
	}
	names := m["names"].([]any)
	if names[0] != "undefined" || names[1] != "object" {
		t.Fatalf("names: %v", names)
	}
	if got, err := run(t, vm, `ctx.record.title = "changed"; record.n = 2`, nil, 0); err == nil || got != nil {
		t.Fatalf("record is undefined when not passed: got %v, %v", got, err)
	}
}

func TestCodeChangesTheCallersRecord(t *testing.T) {
	vm := New(Options{})
	rec := map[string]any{"title": "a"}
	if _, err := run(t, vm, `record.title = record.title.toUpperCase(); ctx.record.extra = 1`, map[string]any{"record": rec}, 0); err != nil {
		t.Fatal(err)
	}
	if rec["title"] != "A" || rec["extra"] != int64(1) {
		t.Fatalf("record after the run: %v", rec)
	}
}

func TestThrowAndAbort(t *testing.T) {
	vm := New(Options{})
	_, err := run(t, vm, `throw new Error("nope")`, nil, 0)
	var te *ThrowError
	if !errors.As(err, &te) || te.Message != "nope" || te.Abort {
		t.Fatalf("throw: %#v", err)
	}
	_, err = run(t, vm, `throw "plain"`, nil, 0)
	if !errors.As(err, &te) || te.Message != "plain" {
		t.Fatalf("throw string: %#v", err)
	}
	_, err = vm.Run(context.Background(), Invocation{
		Code: `await null; helpers.abort("title is taken")`,
		Vars: func(rt *goja.Runtime) map[string]any {
			return map[string]any{"helpers": map[string]any{"abort": func(msg string) { panic(Abort(rt, msg)) }}}
		},
	})
	if !errors.As(err, &te) || te.Message != "title is taken" || !te.Abort {
		t.Fatalf("abort: %#v", err)
	}
}

func TestCompileErrorNamesTheAuthorsPosition(t *testing.T) {
	vm := New(Options{})
	err := vm.Check("const a = 1;\nconst b = ;\n")
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("want a CompileError, got %#v", err)
	}
	if ce.Line != 2 || ce.Column != 11 {
		t.Fatalf("position: line %d column %d (%s)", ce.Line, ce.Column, ce.Message)
	}
	if _, err := run(t, vm, "return (", nil, 0); !errors.As(err, &ce) || ce.Line != 1 {
		t.Fatalf("run of bad code: %#v", err)
	}
	// Code that closes the wrapper early does not escape it.
	if err := vm.Check("}); globalThis.x = 1; (function(){"); !errors.As(err, &ce) {
		t.Fatalf("escaping code compiled: %v", err)
	}
	// An error only the compiler sees (the parser accepts a redeclaration).
	if err := vm.Check("let a = 1;\nlet a = 2;"); !errors.As(err, &ce) || ce.Line != 2 {
		t.Fatalf("redeclared let: %#v", err)
	}
	if err := vm.Check("return 1"); err != nil {
		t.Fatalf("good code: %v", err)
	}
}

func TestStrictModeKeepsGlobalsOut(t *testing.T) {
	vm := New(Options{Runtimes: 1})
	if _, err := run(t, vm, `leaked = 1`, nil, 0); err == nil {
		t.Fatal("an undeclared assignment ran")
	}
}

func TestTimeoutInterruptsBusyAndAwaitingCode(t *testing.T) {
	vm := New(Options{Runtimes: 1})
	for _, code := range []string{
		`for (;;) {}`,
		`await null; while (true) {}`,
		`async function spin() { await 1; for (;;) {} } await spin()`,
	} {
		start := time.Now()
		_, err := run(t, vm, code, nil, 50*time.Millisecond)
		var te *TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("%s: want a TimeoutError, got %#v", code, err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("%s: took %s", code, el)
		}
	}
	// The pool still runs code afterwards.
	if got, err := run(t, vm, `return 7`, nil, time.Second); err != nil || got != int64(7) {
		t.Fatalf("after timeouts: %v %v", got, err)
	}
}

func TestContextEndInterrupts(t *testing.T) {
	vm := New(Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := vm.Run(ctx, Invocation{Code: `for (;;) {}`})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %#v", err)
	}
}

func TestPromiseThatNeverSettles(t *testing.T) {
	vm := New(Options{})
	if _, err := run(t, vm, `await new Promise(() => {})`, nil, time.Second); !errors.Is(err, ErrNeverSettles) {
		t.Fatalf("got %#v", err)
	}
}

func TestProgramsAreCompiledOncePerVersion(t *testing.T) {
	vm := New(Options{Programs: 2})
	for range 3 {
		if _, err := run(t, vm, `return 1`, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := vm.programs.len(); n != 1 {
		t.Fatalf("cached %d programs for one code", n)
	}
	for _, c := range []string{`return 2`, `return 3`, `return 4`} {
		if _, err := run(t, vm, c, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := vm.programs.len(); n != 2 {
		t.Fatalf("cache holds %d programs, bound is 2", n)
	}
}

func TestConcurrentRuns(t *testing.T) {
	vm := New(Options{Runtimes: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			got, err := run(t, vm, `let s = 0; for (let i = 0; i < 1000; i++) s += i; return s + input`, map[string]any{"input": i}, 5*time.Second)
			if err != nil || got != int64(499500+i) {
				errs <- errors.New("wrong result")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
