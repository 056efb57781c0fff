package jsvm

import (
	"github.com/dop251/goja"

	"svcd/engine"
)

// The helpers object (SPEC.md "Helpers available in all code"). Every
// helper is a synchronous Go function: one that waits (a request, a
// query, a write through the log) waits in Go, under the run's context,
// which the execution budget ends. A helper that fails throws an Error
// (errors.go).
//
// Helpers act as the invocation's principal: a hook or a route as its
// caller (rules apply as they would to the caller's own request), jobs,
// queue workers and workflows as the system. helpers.asSystem() is the
// same helpers acting as the system: rules bypassed, writes attributed
// to the system through the code (history's actor_type "system", via
// the code's id, and an audit entry).

// helpers builds the helpers object, acting as the system when system is
// set, else as the invocation's principal.
func (inv *invocation) helpers(system bool) *goja.Object {
	h := &helperSet{inv: inv, p: inv.p}
	if system {
		h.p = engine.SystemPrincipal(inv.id)
	}
	o := inv.rt.NewObject()
	h.records(o)
	h.basics(o)
	h.net(o)
	h.data(o)
	h.crypto(o)
	h.mail(o)
	h.schedule(o)
	h.inbox(o)
	h.pending(o)
	h.system(o)
	set(o, "asSystem", func(goja.FunctionCall) goja.Value {
		if system {
			return o
		}
		if inv.system == nil {
			inv.system = inv.helpers(true)
		}
		return inv.system
	})
	return o
}

// helperSet is the helpers of one invocation acting as p.
type helperSet struct {
	inv *invocation
	p   engine.Principal
}

// set defines a member of o (its errors cannot happen on a plain object).
func set(o *goja.Object, name string, v any) { _ = o.Set(name, v) }

// namespace makes a member object of o named name, built when code
// first reads it: most code uses a few helpers, and a run should not pay
// for wrapping the hundred others.
func (h *helperSet) namespace(o *goja.Object, name string) *lazyNS {
	ns := &lazyNS{}
	rt := h.inv.rt
	var built goja.Value
	getter := rt.ToValue(func(goja.FunctionCall) goja.Value {
		if built == nil {
			obj := rt.NewObject()
			for _, m := range ns.members {
				set(obj, m.name, m.v)
			}
			built = obj
		}
		return built
	})
	_ = o.DefineAccessorProperty(name, getter, nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return ns
}

// lazyNS holds a namespace's members until code reads it.
type lazyNS struct {
	members []lazyMember
}

type lazyMember struct {
	name string
	v    any
}

// set adds a member.
func (n *lazyNS) set(name string, v any) { n.members = append(n.members, lazyMember{name, v}) }

// str is argument i as a string; a missing one (or not a string) throws
// naming the helper and the argument.
func (h *helperSet) str(call goja.FunctionCall, i int, helper, arg string) string {
	v := call.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		h.inv.fail("%s: %s is required", helper, arg)
	}
	s, ok := v.Export().(string)
	if !ok {
		h.inv.fail("%s: %s must be a string", helper, arg)
	}
	return s
}

// optStr is argument i as a string, def when missing.
func (h *helperSet) optStr(call goja.FunctionCall, i int, def string) string {
	v := call.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return def
	}
	return v.String()
}

// opts is argument i as an object of options (nil when missing).
func (h *helperSet) opts(call goja.FunctionCall, i int, helper string) map[string]any {
	v := call.Argument(i)
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	m, err := h.inv.b.toObject(v, helper+": the options")
	if err != nil {
		h.inv.throw(helper, err)
	}
	return m
}

// optString reads a string option ("" when absent).
func optString(o map[string]any, k string) string {
	s, _ := o[k].(string)
	return s
}

// optInt reads an integer option (def when absent or not a number).
func optInt(o map[string]any, k string, def int64) int64 {
	switch n := o[k].(type) {
	case interface{ Int64() (int64, error) }:
		if v, err := n.Int64(); err == nil {
			return v
		}
		if f, ok := n.(interface{ Float64() (float64, error) }); ok {
			if v, err := f.Float64(); err == nil {
				return int64(v)
			}
		}
	}
	return def
}

// optBool reads a boolean option (def when absent).
func optBool(o map[string]any, k string, def bool) bool {
	if b, ok := o[k].(bool); ok {
		return b
	}
	return def
}
