package jsvm

import (
	"context"
	"errors"
	"time"

	"github.com/dop251/goja"

	"svcd/engine"
)

// An invocation is one run of code with its helpers: who the code acts
// as, which code it is (for attribution and logs), and the context its
// helpers work under (the request's or the job's, one level deeper).

// invocation is the state of one run that its helpers share.
type invocation struct {
	m    *Module
	ctx  context.Context
	rt   *goja.Runtime
	b    *bridge
	p    engine.Principal
	kind string // hook, route, job, worker, workflow
	id   string // the code's id: Actor.Via, and the log's
	// budget is what helpers may still hand the code, in bytes
	// (budget.go).
	budget int64
	// system is the helpers object acting as the system principal, made
	// on first use (helpers.asSystem()).
	system goja.Value
}

// runSpec describes one run.
type runSpec struct {
	kind, id, code string
	// p is who the code acts as; its Via is set to id.
	p engine.Principal
	// vars builds the members of ctx other than helpers.
	vars func(inv *invocation) map[string]any
	// finish turns the resolved value into the result (nil: exported).
	finish func(inv *invocation, v goja.Value) (any, error)
}

// run runs s under the execution budget, its helpers one nesting level
// below ctx. The budget bounds the helpers too: their context ends with
// it, so a helper waiting on the network does not outlive the run.
func (m *Module) run(ctx context.Context, s runSpec) (any, error) {
	s.p.Via = s.id
	budget := m.timeout()
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if budget > 0 {
		rctx, cancel = context.WithTimeout(ctx, budget)
	}
	defer cancel()
	var inv *invocation
	in := Invocation{
		Code:    s.code,
		Timeout: budget,
		Vars: func(rt *goja.Runtime) map[string]any {
			inv = &invocation{m: m, ctx: nested(rctx), rt: rt, b: newBridge(rt), p: s.p, kind: s.kind, id: s.id, budget: helperBudget}
			vars := map[string]any{}
			if s.vars != nil {
				vars = s.vars(inv)
			}
			vars["helpers"] = inv.helpers(false)
			return vars
		},
	}
	if s.finish != nil {
		in.Finish = func(rt *goja.Runtime, v goja.Value) (any, error) { return s.finish(inv, v) }
	}
	res, err := m.vm.Run(rctx, in)
	if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		// The budget ran out: a helper waiting on it may have thrown
		// first, but the run failed for its budget.
		err = &TimeoutError{After: budget}
	}
	return res, err
}

// depthKey holds how many levels of code enclose a context.
type depthKey struct{}

// depthOf is the nesting of code around ctx: 0 for a client's request.
func depthOf(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

// nested is ctx one level of code deeper.
func nested(ctx context.Context) context.Context {
	return context.WithValue(ctx, depthKey{}, depthOf(ctx)+1)
}

// logRun logs a run that took longer than hooks.slow_ms.
func (m *Module) logRun(kind, id string, started time.Time) {
	if el := time.Since(started); el >= m.slow() {
		m.log.Warn("jsvm: slow code", "kind", kind, "id", id, "ms", el.Milliseconds(), "hooks.slow_ms", m.slow().Milliseconds())
	}
}

// authValue is the caller as code sees it (ctx.auth): null for an
// anonymous caller.
func authValue(p engine.Principal) map[string]any {
	switch {
	case p.Kind == engine.User:
		a := map[string]any{"type": "user", "id": p.ID, "email": p.Email, "collection": p.Collection, "anonymous": false}
		if p.Claims != nil {
			a["anonymous"] = p.Claims.Anonymous
			if p.Claims.ImpersonatedBy != "" {
				a["impersonatedBy"] = p.Claims.ImpersonatedBy
			}
		}
		return a
	case p.Kind == engine.AdminPrincipal && p.System:
		return map[string]any{"type": "system"}
	case p.Kind == engine.AdminPrincipal:
		a := map[string]any{"type": "admin", "id": p.ID, "email": p.Email, "role": p.Role.String()}
		if p.Scopes != nil {
			a["scopes"] = p.Scopes
		}
		return a
	}
	return nil
}
