// Package jsvm runs the JavaScript that admins author (hooks, routes,
// jobs, queue workers, workflows) with goja.
//
// The runtime layer (vm.go, compile.go, run.go, programs.go) knows nothing
// of records or HTTP: code is the body of an async function, compiled once
// per version and cached, run on a pooled runtime under a time budget that
// interrupts busy loops as well as awaiting code. Helpers are synchronous
// Go functions (a helper that waits, waits in Go under the invocation's
// context), so an invocation needs no event loop: when the function's
// promise has not settled by the time the call returns, the code awaited
// something that can never resolve, and that is an error.
//
// JavaScript never runs inside fsm.Apply: writes made by code become
// commands like any other.
package jsvm
