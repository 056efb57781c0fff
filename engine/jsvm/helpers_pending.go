package jsvm

import (
	"context"

	"github.com/dop251/goja"
)

// Helpers whose work other modules do: enqueue (the queue module) and
// workflows (the workflows module) reach them through interfaces this
// module declares, set when the node is wired (SetEnqueuer,
// SetWorkflows); until then they throw a clear error. So do flags and
// webhooks.dispatch (helpers_flags.go). fs is not offered: it throws.

// EnqueueOptions are helpers.enqueue's options (SPEC.md); nil and empty
// members take the queue's defaults. Its members are engine/queue's, so
// the composition root converts one into the other.
type EnqueueOptions struct {
	// Delay (seconds, fractions allowed) before the first run.
	Delay *float64
	// UniqueKey deduplicates: a job of the queue with this key that has
	// not finished is answered instead of a new one (deduped).
	UniqueKey string
	// Retries is how many more runs a failing job gets.
	Retries *int64
	// Backoff is "exponential" or "fixed".
	Backoff string
	// RetryDelayMs is the delay before the first retry.
	RetryDelayMs *int64
}

// Enqueuer puts a job on a queue (engine/queue, wired by the composition
// root).
type Enqueuer interface {
	Enqueue(ctx context.Context, queue string, payload any, opts EnqueueOptions) (jobID string, deduped bool, err error)
}

// Workflows starts workflow runs and delivers events to parked ones
// (engine/workflows, wired by the composition root).
type Workflows interface {
	Start(ctx context.Context, name string, input any) (runID string, err error)
	Emit(ctx context.Context, event string, payload any, key string) (woken int, err error)
}

// SetEnqueuer wires helpers.enqueue.
func (m *Module) SetEnqueuer(e Enqueuer) { m.enqueuer.Store(&e) }

// SetWorkflows wires helpers.workflows.
func (m *Module) SetWorkflows(w Workflows) { m.workflows.Store(&w) }

func (h *helperSet) pending(o *goja.Object) {
	set(o, "enqueue", h.enqueue)
	wf := h.namespace(o, "workflows")
	wf.set("start", h.workflowStart)
	wf.set("emit", h.workflowEmit)
	h.flagsAndWebhooks(o)
	fs := h.namespace(o, "fs")
	for _, name := range []string{"readFile", "writeFile", "exists", "list", "remove"} {
		fs.set(name, h.unavailable("helpers.fs."+name, "file access is not available to code yet: a node's own disk is not replicated, so code reads and writes files through records with file fields"))
	}
}

// unavailable is a helper that throws why it cannot run yet.
func (h *helperSet) unavailable(name, why string) func(goja.FunctionCall) goja.Value {
	return func(goja.FunctionCall) goja.Value {
		h.inv.fail("%s: %s", name, why)
		return nil
	}
}

// enqueue(queue, payload, {delay, uniqueKey, retries, backoff,
// retryDelayMs}) is {jobId, deduped}.
func (h *helperSet) enqueue(call goja.FunctionCall) goja.Value {
	e := h.inv.m.enqueuer.Load()
	if e == nil {
		h.inv.fail("helpers.enqueue: queues are not available on this node (the queue module is not wired)")
	}
	queue := h.str(call, 0, "helpers.enqueue", "the queue")
	payload, err := h.inv.b.toGo(call.Argument(1))
	if err != nil {
		h.inv.throw("helpers.enqueue", err)
	}
	o := h.opts(call, 2, "helpers.enqueue")
	opts := EnqueueOptions{UniqueKey: optString(o, "uniqueKey"), Backoff: optString(o, "backoff"),
		Retries: optIntPtr(o, "retries"), RetryDelayMs: optIntPtr(o, "retryDelayMs")}
	if n, ok := o["delay"].(interface{ Float64() (float64, error) }); ok {
		if f, err := n.Float64(); err == nil {
			opts.Delay = &f
		}
	}
	id, deduped, err := (*e).Enqueue(h.inv.ctx, queue, payload, opts)
	if err != nil {
		h.inv.throw("helpers.enqueue", err)
	}
	return h.inv.b.fromGo(map[string]any{"jobId": id, "deduped": deduped})
}

// workflows.start(name, input) is {runId}.
func (h *helperSet) workflowStart(call goja.FunctionCall) goja.Value {
	w := h.workflowsOrThrow("helpers.workflows.start")
	name := h.str(call, 0, "helpers.workflows.start", "the workflow's name")
	input, err := h.inv.b.toGo(call.Argument(1))
	if err != nil {
		h.inv.throw("helpers.workflows.start", err)
	}
	id, err := w.Start(h.inv.ctx, name, input)
	if err != nil {
		h.inv.throw("helpers.workflows.start", err)
	}
	return h.inv.b.fromGo(map[string]any{"runId": id})
}

// workflows.emit(event, payload, {key}) is {woken}.
func (h *helperSet) workflowEmit(call goja.FunctionCall) goja.Value {
	w := h.workflowsOrThrow("helpers.workflows.emit")
	event := h.str(call, 0, "helpers.workflows.emit", "the event")
	payload, err := h.inv.b.toGo(call.Argument(1))
	if err != nil {
		h.inv.throw("helpers.workflows.emit", err)
	}
	o := h.opts(call, 2, "helpers.workflows.emit")
	n, err := w.Emit(h.inv.ctx, event, payload, optString(o, "key"))
	if err != nil {
		h.inv.throw("helpers.workflows.emit", err)
	}
	return h.inv.b.fromGo(map[string]any{"woken": n})
}

func (h *helperSet) workflowsOrThrow(name string) Workflows {
	w := h.inv.m.workflows.Load()
	if w == nil {
		h.inv.fail("%s: workflows are not available on this node (the workflows module is not wired)", name)
	}
	return *w
}

// optIntPtr reads an integer option, nil when absent.
func optIntPtr(o map[string]any, k string) *int64 {
	if _, ok := o[k]; !ok {
		return nil
	}
	n := optInt(o, k, 0)
	return &n
}
