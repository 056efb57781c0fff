// Package jsvm runs the JavaScript that admins author (hooks, routes,
// jobs, queue workers, workflows) with goja. It is two layers.
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
// The module (module.go and the rest) is the engine's JavaScript module,
// registered on the core like every module (engine/DESIGN.md): the tables
// of hooks and custom routes (migrate.go) and their commands (commands.go,
// types 86-89), the admin CRUD (hook.go, route.go), the cache of both that
// follows committed commands (cache.go), the record interceptor that runs
// hooks around every record write an entry point makes (intercept.go,
// hook_run.go), the serving of custom routes (serve.go, route_path.go,
// route_io.go), the helpers object (helpers*.go) and Run, through which
// jobs, queue workers and workflows run their code with the same helpers
// (run_code.go). docs/javascript.md is the user's side of it.
//
// JavaScript never runs inside fsm.Apply: writes made by code become
// commands like any other, proposed by the node the code runs on.
package jsvm
