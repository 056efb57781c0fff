package jsvm

import (
	"context"

	"github.com/dop251/goja"
)

// helpers.notify(userId, {title, body, data}, {providers, inbox, push})
// is the notifications module's notify (SPEC.md): it writes an inbox row
// for the user unless inbox is false and enqueues one push job per enabled
// provider unless push is false, and answers {inboxRowId, enqueued:
// [{provider, jobId, deduped}]}. It reaches the module through Notifier,
// wired by the composition root (SetNotifier); until then it throws.

// NotifyMessage is what a notification says.
type NotifyMessage struct {
	Title, Body string
	Data        map[string]any
}

// NotifyOptions are notify's options (nil and empty: the module's
// defaults: every enabled provider, inbox and push on).
type NotifyOptions struct {
	Providers   []string
	Inbox, Push *bool
}

// Notifier sends a notification to a user (engine/notify); the answer is
// SPEC.md's {inboxRowId, enqueued} as JSON-like values.
type Notifier interface {
	Notify(ctx context.Context, userID string, msg NotifyMessage, opts NotifyOptions) (map[string]any, error)
}

// SetNotifier wires helpers.notify.
func (m *Module) SetNotifier(n Notifier) { m.notifier.Store(&n) }

func (h *helperSet) inbox(o *goja.Object) {
	set(o, "notify", h.notify)
}

func (h *helperSet) notify(call goja.FunctionCall) goja.Value {
	const name = "helpers.notify"
	n := h.inv.m.notifier.Load()
	if n == nil {
		h.inv.fail("%s: notifications are not available on this node (the notifications module is not wired)", name)
	}
	user := h.str(call, 0, name, "the user's id")
	msg, err := h.inv.b.toObject(call.Argument(1), "the message")
	if err != nil || msg == nil {
		h.inv.fail("%s: the message must be an object {title, body, data}", name)
	}
	m := NotifyMessage{Title: optString(msg, "title"), Body: optString(msg, "body")}
	if d, ok := msg["data"].(map[string]any); ok {
		m.Data = d
	} else if msg["data"] != nil {
		h.inv.fail("%s: data must be an object", name)
	}
	o := h.opts(call, 2, name)
	var opts NotifyOptions
	if ps, ok := o["providers"].([]any); ok {
		for _, p := range ps {
			s, ok := p.(string)
			if !ok {
				h.inv.fail("%s: providers must be an array of provider names", name)
			}
			opts.Providers = append(opts.Providers, s)
		}
	}
	for k, dst := range map[string]**bool{"inbox": &opts.Inbox, "push": &opts.Push} {
		if _, ok := o[k]; ok {
			v := optBool(o, k, true)
			*dst = &v
		}
	}
	out, err := (*n).Notify(h.inv.ctx, user, m, opts)
	if err != nil {
		h.inv.throw(name, err)
	}
	return h.inv.b.fromGo(out)
}
