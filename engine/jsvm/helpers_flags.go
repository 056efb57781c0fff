package jsvm

import (
	"context"

	"github.com/dop251/goja"
)

// flags and webhooks.dispatch reach the flags and webhooks modules
// through interfaces this module declares, wired by the composition root
// (SetFlags, SetWebhooks); until then they throw a clear error.

// FlagEvaluator evaluates feature flags locally (engine/flags).
type FlagEvaluator interface {
	// Evaluate answers each flag's value for the evaluation context; keys
	// empty: every flag. Unknown keys are left out.
	Evaluate(ctx context.Context, evalCtx map[string]any, keys []string) (map[string]any, error)
}

// WebhookDispatcher queues a custom event for the webhooks whose patterns
// match it (engine/webhooks), through the log like a record event.
type WebhookDispatcher interface {
	Dispatch(ctx context.Context, event string, data any) error
}

// SetFlags wires helpers.flags.
func (m *Module) SetFlags(f FlagEvaluator) { m.flags.Store(&f) }

// SetWebhooks wires helpers.webhooks.dispatch.
func (m *Module) SetWebhooks(w WebhookDispatcher) { m.webhooks.Store(&w) }

func (h *helperSet) flagsAndWebhooks(o *goja.Object) {
	flags := h.namespace(o, "flags")
	flags.set("evaluate", h.flagsEvaluate)
	flags.set("get", h.flagsGet)
	flags.set("isEnabled", h.flagsIsEnabled)
	wh := h.namespace(o, "webhooks")
	wh.set("dispatch", h.webhooksDispatch)
}

// flags.evaluate(context, keys?) is {key: value} of the flags asked for
// (every flag when keys is absent).
func (h *helperSet) flagsEvaluate(call goja.FunctionCall) goja.Value {
	const name = "helpers.flags.evaluate"
	evalCtx := h.flagContext(call, 0, name)
	var keys []string
	if a := call.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
		v, err := h.inv.b.toGo(a)
		if err != nil {
			h.inv.throw(name, err)
		}
		list, ok := v.([]any)
		if !ok {
			h.inv.fail("%s: keys must be an array of flag keys", name)
		}
		for _, k := range list {
			s, ok := k.(string)
			if !ok {
				h.inv.fail("%s: keys must be an array of flag keys", name)
			}
			keys = append(keys, s)
		}
	}
	return h.inv.b.fromGo(h.evaluate(name, evalCtx, keys))
}

// flags.get(key, context) is the flag's value (undefined for an unknown
// flag).
func (h *helperSet) flagsGet(call goja.FunctionCall) goja.Value {
	const name = "helpers.flags.get"
	key := h.str(call, 0, name, "the flag's key")
	v, ok := h.evaluate(name, h.flagContext(call, 1, name), []string{key})[key]
	if !ok {
		return goja.Undefined()
	}
	return h.inv.b.fromGo(v)
}

// flags.isEnabled(key, context) is whether the flag's value is true.
func (h *helperSet) flagsIsEnabled(call goja.FunctionCall) goja.Value {
	const name = "helpers.flags.isEnabled"
	key := h.str(call, 0, name, "the flag's key")
	v := h.evaluate(name, h.flagContext(call, 1, name), []string{key})[key]
	return h.inv.rt.ToValue(v == true)
}

func (h *helperSet) evaluate(name string, evalCtx map[string]any, keys []string) map[string]any {
	f := h.inv.m.flags.Load()
	if f == nil {
		h.inv.fail("%s: feature flags are not available on this node (the flags module is not wired)", name)
	}
	out, err := (*f).Evaluate(h.inv.ctx, evalCtx, keys)
	if err != nil {
		h.inv.throw(name, err)
	}
	return out
}

// flagContext is argument i as an evaluation context: an object (absent:
// empty).
func (h *helperSet) flagContext(call goja.FunctionCall, i int, name string) map[string]any {
	a := call.Argument(i)
	if goja.IsUndefined(a) || goja.IsNull(a) {
		return map[string]any{}
	}
	v, err := h.inv.b.toGo(a)
	if err != nil {
		h.inv.throw(name, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		h.inv.fail("%s: the evaluation context must be an object of attributes", name)
	}
	return m
}

// webhooks.dispatch(event, data) queues a custom event for the matching
// webhooks; it answers nothing.
func (h *helperSet) webhooksDispatch(call goja.FunctionCall) goja.Value {
	const name = "helpers.webhooks.dispatch"
	w := h.inv.m.webhooks.Load()
	if w == nil {
		h.inv.fail("%s: webhooks are not available on this node (the webhooks module is not wired)", name)
	}
	event := h.str(call, 0, name, "the event")
	data, err := h.inv.b.toGo(call.Argument(1))
	if err != nil {
		h.inv.throw(name, err)
	}
	if err := (*w).Dispatch(h.inv.ctx, event, data); err != nil {
		h.inv.throw(name, err)
	}
	return goja.Undefined()
}
