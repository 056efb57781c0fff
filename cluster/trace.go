package cluster

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"svcd/fsm"
)

// Traces across the forwarding hop (docs/operations.md "Traces"): a
// follower that forwards a write while the request is traced sends it on
// a connTraced connection, whose frame carries the W3C traceparent before
// the command, so the leader's spans join the follower's trace. A leader of
// an older version answers "unknown request" without applying anything,
// and the follower then forwards the plain way.

// connTraced is a forwarded command with its trace context.
const connTraced byte = 'G'

// TracerSource returns the tracer of the current settings, or nil when
// tracing is off.
type TracerSource func() trace.Tracer

// tracerHolder keeps the node's TracerSource (set after start by the HTTP
// layer, which owns the settings).
type tracerHolder struct{ p atomic.Pointer[TracerSource] }

// SetTracer makes the node trace forwarded writes it leads with src.
func (n *Node) SetTracer(src TracerSource) { n.tracer.p.Store(&src) }

func (n *Node) tracerNow() trace.Tracer {
	if p := n.tracer.p.Load(); p != nil && *p != nil {
		return (*p)()
	}
	return nil
}

// encodeTraced is the connTraced frame: one length byte, the traceparent,
// the command.
func encodeTraced(ctx context.Context, cmd fsm.Command) []byte {
	h := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, h)
	tp := h["traceparent"]
	if len(tp) > 255 {
		tp = ""
	}
	b := append([]byte{byte(len(tp))}, tp...)
	return append(b, cmd.Encode()...)
}

// decodeTraced splits a connTraced frame into a context carrying the
// remote span and the command's bytes.
func decodeTraced(b []byte) (context.Context, []byte, error) {
	if len(b) < 1 || len(b) < 1+int(b[0]) {
		return nil, nil, errors.New("bad traced frame")
	}
	tp := string(b[1 : 1+int(b[0])])
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	return ctx, b[1+int(b[0]):], nil
}

// startSpan starts a span of the leader's tracer under ctx, or returns
// ctx and a no-op span when tracing is off here.
func (n *Node) startSpan(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	tr := n.tracerNow()
	if tr == nil {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return tr.Start(ctx, name, trace.WithSpanKind(kind))
}

// childSpan starts a child of the span in ctx, when it records.
func childSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer("svcd").Start(ctx, name)
}

// forward sends cmd to the leader: on a connTraced connection when the
// request is traced (a "forward" span), else the plain way.
func (n *Node) forward(ctx context.Context, cmd fsm.Command) (rpcReply, error) {
	ctx, span := childSpan(ctx, "forward")
	defer span.End()
	if !span.IsRecording() {
		return n.call(ctx, connForward, cmd.Encode())
	}
	reply, err := n.call(ctx, connTraced, encodeTraced(ctx, cmd))
	if err == nil && errors.Is(failureErr(reply.Failure), ErrNotForwarded) {
		return n.call(ctx, connForward, cmd.Encode()) // an older leader
	}
	return reply, err
}

// commitApplySpans records, under the span in ctx when it records, the
// Raft commit (from the proposal until the state machine took the entry)
// and the apply (the state machine's batch holding it) as two spans,
// timed from what this node saw; "raft.commit_apply" covers both when the
// batch's times are gone or the write failed.
func (n *Node) commitApplySpans(ctx context.Context, proposed time.Time, idx uint64, err error) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return
	}
	tr := parent.TracerProvider().Tracer("svcd")
	start, end, ok := n.applied.lookup(idx)
	if err != nil || !ok || start.Before(proposed) {
		_, sp := tr.Start(ctx, "raft.commit_apply", trace.WithTimestamp(proposed))
		sp.End()
		return
	}
	_, commit := tr.Start(ctx, "raft.commit", trace.WithTimestamp(proposed))
	commit.End(trace.WithTimestamp(start))
	_, apply := tr.Start(ctx, "apply", trace.WithTimestamp(start))
	apply.End(trace.WithTimestamp(end))
}
