package jsvm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"

	"svcd/engine"
)

// A helper that fails throws an Error whose message says what failed.
// A domain error (a record that does not validate, a rule that denies)
// also carries its HTTP status and details as e.status and e.details,
// so code can catch it and look; uncaught in a route, it is the route's
// answer.

// kindStatus is the HTTP status of each domain error kind (the api
// package's table; code sees the same numbers clients do).
var kindStatus = map[engine.Kind]int{
	engine.KindInternal: 500, engine.KindBadRequest: 400, engine.KindUnauthorized: 401,
	engine.KindForbidden: 403, engine.KindNotFound: 404, engine.KindMethodNotAllowed: 405,
	engine.KindConflict: 409, engine.KindPrecondition: 412, engine.KindValidation: 422,
	engine.KindUnavailable: 503, engine.KindTooManyRequests: 429, engine.KindTooLarge: 413,
	engine.KindTimeout: 408, engine.KindInsufficientStorage: 507, engine.KindGone: 410,
	engine.KindUnsupportedMedia: 415,
}

// statusKind is kindStatus reversed.
func statusKind(status int) (engine.Kind, bool) {
	for k, s := range kindStatus {
		if s == status {
			return k, true
		}
	}
	return 0, false
}

// jsError is a new Error with message msg, and status and details when
// set.
func (b *bridge) jsError(msg string, status int, details map[string]any) *goja.Object {
	e, err := b.rt.New(b.rt.Get("Error"), b.rt.ToValue(msg))
	if err != nil {
		panic(err)
	}
	if status > 0 {
		_ = e.Set("status", status)
	}
	if len(details) > 0 {
		_ = e.Set("details", b.fromGo(details))
	}
	return e
}

// throw makes the calling helper throw err: a domain error with its
// status and details, the end of the run's context as itself (so the
// budget's interrupt is what the code sees), anything else with what
// for context.
func (inv *invocation) throw(what string, err error) {
	if de := engine.AsError(err); de != nil {
		msg := de.Message
		if !strings.HasPrefix(msg, what+": ") {
			msg = what + ": " + msg
		}
		panic(inv.b.jsError(msg, kindStatus[de.Kind], de.Details))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		panic(inv.b.jsError(what+": "+err.Error(), 503, nil))
	}
	panic(inv.b.jsError(fmt.Sprintf("%s: %v", what, err), 0, nil))
}

// fail throws an Error with the message.
func (inv *invocation) fail(format string, args ...any) {
	panic(inv.b.jsError(fmt.Sprintf(format, args...), 0, nil))
}

// thrownStatus reads the status and details a thrown value carries
// (a helper's domain error, or code's own throw of such an object).
func thrownStatus(te *ThrowError) (int, map[string]any) {
	m, ok := te.Value.(map[string]any)
	if !ok {
		return 0, nil
	}
	status := 0
	switch s := m["status"].(type) {
	case int64:
		status = int(s)
	case float64:
		status = int(s)
	}
	d, _ := m["details"].(map[string]any)
	return status, d
}

// rethrow throws, from a helper, the error of a JavaScript function it
// called.
func rethrow(err error) {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		panic(ex.Value())
	}
	panic(err)
}
