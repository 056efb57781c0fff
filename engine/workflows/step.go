package workflows

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"

	"github.com/dop251/goja"
)

// stepSource builds the step object (step.js); it is compiled once per
// module and evaluated on each advance's runtime.
//
//go:embed step.js
var stepSource string

// compileStep compiles stepSource.
func compileStep() *goja.Program {
	return goja.MustCompile("step.js", stepSource, true)
}

// stepObject evaluates the step factory on rt with a's host functions.
func (a *advance) stepObject(rt *goja.Runtime) (goja.Value, error) {
	factory, err := rt.RunProgram(a.m.stepPrg)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(factory)
	if !ok {
		return nil, fmt.Errorf("workflows: step.js did not evaluate to a function")
	}
	host := rt.NewObject()
	for name, f := range map[string]func(goja.FunctionCall) goja.Value{
		"begin":   func(c goja.FunctionCall) goja.Value { return a.begin(rt, c) },
		"done":    func(c goja.FunctionCall) goja.Value { a.done(rt, c); return goja.Undefined() },
		"failed":  func(c goja.FunctionCall) goja.Value { a.failed(rt, c); return goja.Undefined() },
		"sleep":   func(c goja.FunctionCall) goja.Value { return a.sleep(rt, c) },
		"wait":    func(c goja.FunctionCall) goja.Value { return a.wait(rt, c) },
		"matched": func(c goja.FunctionCall) goja.Value { a.matched(rt, c); return goja.Undefined() },
		"park":    func(c goja.FunctionCall) goja.Value { a.parkWait(rt, c); return goja.Undefined() },
	} {
		if err := host.Set(name, f); err != nil {
			return nil, err
		}
	}
	return fn(goja.Undefined(), host)
}

// answer builds the plain object host functions answer with.
func answer(rt *goja.Runtime, kv ...any) goja.Value {
	o := rt.NewObject()
	for i := 0; i+1 < len(kv); i += 2 {
		_ = o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// stepAPI names the step function of a kind of step.
func stepAPI(kind string) string {
	if kind == "wait" {
		return "step.waitForEvent"
	}
	return "step." + kind
}

// stepName reads and checks the step name argument, and that it is used
// once in this advance (names are memo keys: unique and stable).
func (a *advance) stepName(rt *goja.Runtime, v goja.Value, kind string) string {
	name, ok := v.Export().(string)
	switch {
	case !ok || name == "":
		panic(rt.NewTypeError("%s: the step name must be a non-empty string", stepAPI(kind)))
	case len(name) > maxStepName:
		panic(rt.NewTypeError("%s: the step name is longer than %d bytes", stepAPI(kind), maxStepName))
	}
	if s := a.steps[name]; s != nil && s.kind != kind {
		panic(rt.NewTypeError("step name %q belongs to a %s, not a %s", name, stepAPI(s.kind), stepAPI(kind)))
	}
	if a.used[name] {
		panic(rt.NewTypeError("step name %q is used twice: step names must be unique in a workflow", name))
	}
	a.used[name] = true
	return name
}

// option reads member key of an options argument (undefined when opts
// is not an object or lacks it).
func option(rt *goja.Runtime, opts goja.Value, key string) goja.Value {
	if opts == nil || goja.IsUndefined(opts) || goja.IsNull(opts) {
		return goja.Undefined()
	}
	o, ok := opts.(*goja.Object)
	if !ok {
		panic(rt.NewTypeError("step options must be an object"))
	}
	if v := o.Get(key); v != nil {
		return v
	}
	return goja.Undefined()
}

// maxSeconds bounds a sleep and a wait's timeout: ten years.
const maxSeconds = 10 * 366 * 86400

// seconds reads a number of seconds from 0 to maxSeconds.
func seconds(rt *goja.Runtime, v goja.Value, what string) float64 {
	f, ok := number(v)
	if !ok || f < 0 || f > maxSeconds {
		panic(rt.NewTypeError("%s must be a number of seconds from 0 to ten years", what))
	}
	return f
}

// number reads a JavaScript number (not NaN).
func number(v goja.Value) (float64, bool) {
	switch x := v.Export().(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	}
	return 0, false
}

// keyString reads an event key: a string or a number, undefined or null
// for none.
func keyString(rt *goja.Runtime, v goja.Value) *string {
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	var s string
	switch x := v.Export().(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		panic(rt.NewTypeError("step.waitForEvent: key must be a string or a number"))
	}
	if s == "" || len(s) > maxStepName {
		panic(rt.NewTypeError("step.waitForEvent: key must have 1 to %d bytes", maxStepName))
	}
	return &s
}
