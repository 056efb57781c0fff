package jsvm

import (
	"runtime"

	"github.com/dop251/goja"
)

// Options size a VM.
type Options struct {
	// Runtimes is how many idle runtimes the pool keeps (default
	// 2×GOMAXPROCS). More invocations than that at once create runtimes
	// that are dropped afterwards.
	Runtimes int
	// Programs is how many compiled code versions stay cached (default 512).
	Programs int
}

// VM runs code: a pool of goja runtimes and the compiled programs they
// share. It is safe for concurrent use; each invocation has a runtime to
// itself.
type VM struct {
	idle     chan *goja.Runtime
	programs *programs
}

// New returns a VM.
func New(o Options) *VM {
	if o.Runtimes <= 0 {
		o.Runtimes = 2 * runtime.GOMAXPROCS(0)
	}
	if o.Programs <= 0 {
		o.Programs = 512
	}
	return &VM{idle: make(chan *goja.Runtime, o.Runtimes), programs: newPrograms(o.Programs)}
}

// Check compiles code and returns a *CompileError naming the line and
// column when it does not parse. The program stays cached for its runs.
func (vm *VM) Check(code string) error {
	_, err := vm.programs.get(code)
	return err
}

// take returns an idle runtime, or a new one.
func (vm *VM) take() *goja.Runtime {
	select {
	case rt := <-vm.idle:
		return rt
	default:
		return newRuntime()
	}
}

// give returns a runtime to the pool, or drops it when the pool is full.
func (vm *VM) give(rt *goja.Runtime) {
	select {
	case vm.idle <- rt:
	default:
	}
}

// newRuntime is a runtime as code sees it: Go struct fields under their
// json names, methods under lower-camel names.
func newRuntime() *goja.Runtime {
	rt := goja.New()
	rt.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	return rt
}
