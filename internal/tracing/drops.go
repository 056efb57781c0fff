package tracing

import (
	"context"
	"log/slog"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// counters are a Tracer's export figures, kept across setting changes.
type counters struct {
	dropped atomic.Int64 // spans dropped because the queue was full
	failed  atomic.Int64 // export posts the collector did not take
}

// boundedProcessor sits in front of the SDK's batch processor and bounds
// the spans ended but not yet exported: past max a span is dropped and
// counted, so a slow collector never makes a request wait and the drops
// are known (the SDK's own count is not exposed).
type boundedProcessor struct {
	sdktrace.SpanProcessor
	pending *atomic.Int64
	max     int64
	c       *counters
	log     *slog.Logger
}

// OnEnd hands the span on, or drops it when the queue is full.
func (p *boundedProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if p.pending.Add(1) > p.max {
		p.pending.Add(-1)
		if n := p.c.dropped.Add(1); n%1000 == 1 && p.log != nil {
			p.log.Warn("trace spans dropped: the export queue is full", "dropped", n)
		}
		return
	}
	p.SpanProcessor.OnEnd(s)
}

// Shutdown implements sdktrace.SpanProcessor.
func (p *boundedProcessor) Shutdown(ctx context.Context) error { return p.SpanProcessor.Shutdown(ctx) }

// Dropped is the number of spans dropped because the export queue was
// full, since the start.
func (t *Tracer) Dropped() int64 { return t.c.dropped.Load() }

// Failed is the number of export posts that failed, since the start.
func (t *Tracer) Failed() int64 { return t.c.failed.Load() }
