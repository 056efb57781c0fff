package jsvm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// Invocation is one run of code.
type Invocation struct {
	// Code is the body of the async function (CONTRACT.md).
	Code string
	// Vars builds the members of ctx on the invocation's runtime (helpers
	// need it to make their objects). A member named in Names is also
	// bound as a name of its own. Go maps and slices are passed by
	// reference, so code that changes ctx.record changes the caller's map.
	Vars func(rt *goja.Runtime) map[string]any
	// Timeout interrupts the code, awaiting or busy, after this long; zero
	// runs without a budget.
	Timeout time.Duration
	// Finish, when set, turns the resolved value into the result, on the
	// invocation's runtime before it returns to the pool (the caller
	// reads back what the code changed, or encodes the value its own
	// way). Its error is the run's.
	Finish func(rt *goja.Runtime, result goja.Value) (any, error)
}

// TimeoutError is code that ran past its budget.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("code ran past its %s budget (execution.timeout_ms)", e.After)
}

// ThrowError is code that threw (or whose promise rejected). Abort is set
// when the thrown value came from Abort (helpers.abort).
type ThrowError struct {
	Message string
	Abort   bool
	// Value is the thrown value as Go sees it (an Error object exports as
	// a map of its own enumerable properties, often empty).
	Value any
}

func (e *ThrowError) Error() string { return e.Message }

// ErrNeverSettles is code whose promise is still pending when the call
// returns: it awaited something no helper will ever resolve.
var ErrNeverSettles = errors.New("code awaited a promise that never settles (helpers are synchronous; there are no timers)")

// abortMark marks the errors Abort makes.
const abortMark = "__svcAbort"

// Abort returns the error helpers.abort throws: an Error with message msg
// that Run reports as a ThrowError with Abort set.
func Abort(rt *goja.Runtime, msg string) *goja.Object {
	e, err := rt.New(rt.Get("Error"), rt.ToValue(msg))
	if err != nil {
		panic(err)
	}
	_ = e.DefineDataProperty(abortMark, rt.ToValue(true), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	return e
}

type interruptReason int

const (
	byTimeout interruptReason = iota + 1
	byContext
)

// Run compiles (or finds cached) inv.Code, runs it on a pooled runtime and
// returns what its promise resolved to, exported to Go (nil for
// undefined). Errors: *CompileError, *TimeoutError, *ThrowError, the
// context's error when ctx ended first, ErrNeverSettles.
func (vm *VM) Run(ctx context.Context, inv Invocation) (any, error) {
	prg, err := vm.programs.get(inv.Code)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rt := vm.take()
	clean := true
	stops := make([]func() bool, 0, 2)
	if inv.Timeout > 0 {
		stops = append(stops, time.AfterFunc(inv.Timeout, func() { rt.Interrupt(byTimeout) }).Stop)
	}
	stops = append(stops, context.AfterFunc(ctx, func() { rt.Interrupt(byContext) }))
	defer func() {
		for _, stop := range stops {
			if !stop() {
				// The interrupt fired, or is firing now: this runtime
				// may be interrupted again later, so it leaves the pool.
				clean = false
			}
		}
		if r := recover(); r != nil {
			panic(r)
		}
		if clean {
			rt.ClearInterrupt()
			vm.give(rt)
		}
	}()
	res, err := vm.call(rt, prg, inv)
	if err != nil {
		clean = false
		return nil, vm.runError(ctx, inv, err)
	}
	p, ok := res.Export().(*goja.Promise)
	if !ok {
		return finish(rt, inv, res)
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return finish(rt, inv, p.Result())
	case goja.PromiseStateRejected:
		return nil, thrown(rt, p.Result())
	default:
		clean = false
		return nil, ErrNeverSettles
	}
}

// finish is the result of a fulfilled run: inv.Finish's, or v exported.
// A panic of Finish with a JavaScript value (a throw from code it calls,
// such as a toJSON) is the code's throw.
func finish(rt *goja.Runtime, inv Invocation, v goja.Value) (out any, err error) {
	if inv.Finish == nil {
		return exportValue(v), nil
	}
	defer func() {
		if r := recover(); r != nil {
			jv, ok := r.(goja.Value)
			if !ok {
				panic(r)
			}
			out, err = nil, thrown(rt, jv)
		}
	}()
	return inv.Finish(rt, v)
}

// call evaluates the wrapper and calls the function with ctx and its
// members.
func (vm *VM) call(rt *goja.Runtime, prg *goja.Program, inv Invocation) (goja.Value, error) {
	fnv, err := rt.RunProgram(prg)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return nil, errors.New("jsvm: the wrapper did not evaluate to a function")
	}
	var vars map[string]any
	if inv.Vars != nil {
		vars = inv.Vars(rt)
	}
	ctxObj := rt.NewObject()
	for name, v := range vars {
		if err := ctxObj.Set(name, v); err != nil {
			return nil, err
		}
	}
	args := make([]goja.Value, 1, 1+len(Names))
	args[0] = ctxObj
	for _, name := range Names {
		if v, ok := vars[name]; ok {
			args = append(args, rt.ToValue(v))
		} else {
			args = append(args, goja.Undefined())
		}
	}
	return fn(goja.Undefined(), args...)
}

// runError maps an error of the call itself: an interrupt, or an
// exception thrown synchronously (by the wrapper, or a panic of a helper
// that escaped the async function).
func (vm *VM) runError(ctx context.Context, inv Invocation, err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		switch ie.Value() {
		case byTimeout:
			return &TimeoutError{After: inv.Timeout}
		case byContext:
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		return err
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return &ThrowError{Message: ex.Value().String(), Value: exportValue(ex.Value())}
	}
	return err
}

// thrown describes a rejection value.
func thrown(rt *goja.Runtime, v goja.Value) *ThrowError {
	te := &ThrowError{Message: "undefined", Value: exportValue(v)}
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return te
	}
	if o, ok := v.(*goja.Object); ok {
		if m := o.Get(abortMark); m != nil && m.ToBoolean() {
			te.Abort = true
		}
		if msg := o.Get("message"); msg != nil && !goja.IsUndefined(msg) {
			te.Message = msg.String()
			return te
		}
	}
	te.Message = v.String()
	return te
}

// exportValue is v as Go sees it; undefined and null are nil.
func exportValue(v goja.Value) any {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	return v.Export()
}
