package jsvm

import (
	"context"
	"errors"
	"time"

	"github.com/dop251/goja"

	"svcd/engine"
)

// Code run by other subsystems (cron and one-off jobs, queue workers,
// workflows: scheduler loops on the leader) goes through Run, which gives
// it the same helpers as hooks and routes. It acts as the system unless
// the caller names a principal.

// Call is one run of code for another subsystem.
type Call struct {
	// Kind names the kind of code in logs: job, worker, workflow.
	Kind string
	// ID is the code's id: history's via, the audit's actor, the log's
	// id.
	ID   string
	Code string
	// Vars are members of ctx besides helpers, as JSON-like Go values
	// (payload, attempt, queue, jobId, scheduledAt, input): code sees
	// plain objects and arrays.
	Vars map[string]any
	// VarsFunc adds members that need the invocation's runtime (a
	// workflow's step object with its functions); nil: none.
	VarsFunc func(rt *goja.Runtime) map[string]any
	// Principal is who the code acts as; nil: the system
	// (engine.SystemPrincipal).
	Principal *engine.Principal
}

// ErrNotJSON is code of a job, worker or workflow that returned what JSON
// cannot hold (a function, a symbol).
var ErrNotJSON = errors.New("the return value is not JSON (a function or a symbol)")

// Run runs c's code under the execution budget (execution.timeout_ms)
// and returns what it resolved to, as JSON-like Go values (maps, slices,
// json.Number, strings, booleans, nil). Errors are the VM's:
// *CompileError, *TimeoutError, *ThrowError (Abort set for
// helpers.abort), ErrNeverSettles, ErrNotJSON, or the context's.
func (m *Module) Run(ctx context.Context, c Call) (any, error) {
	p := engine.SystemPrincipal(c.ID)
	if c.Principal != nil {
		p = *c.Principal
	}
	started := time.Now()
	defer m.logRun(c.Kind, c.ID, started)
	return m.run(ctx, runSpec{
		kind: c.Kind, id: c.ID, code: c.Code, p: p,
		vars: func(inv *invocation) map[string]any {
			vars := make(map[string]any, len(c.Vars)+2)
			for k, v := range c.Vars {
				vars[k] = inv.b.fromGo(v)
			}
			if c.VarsFunc != nil {
				for k, v := range c.VarsFunc(inv.rt) {
					vars[k] = v
				}
			}
			if _, ok := vars["auth"]; !ok {
				vars["auth"] = inv.b.fromGo(nilMap(authValue(p)))
			}
			return vars
		},
		finish: func(inv *invocation, v goja.Value) (any, error) {
			out, err := inv.b.toGo(v)
			if err == nil && out == nil && v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
				// JSON.stringify dropped it: a function or a symbol.
				return nil, ErrNotJSON
			}
			return out, err
		},
	})
}
