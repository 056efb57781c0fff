// Package tracing exports per-request spans as OTLP over HTTP JSON
// (SPEC.md: otel.endpoint, otel.service_name, otel.headers) with the
// OpenTelemetry SDK. It is off, and creates no spans, while otel.endpoint
// is empty; a change of the settings takes effect on the next request.
package tracing

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Setting reads one setting's current value (the engine's settings).
type Setting func(key string) string

// Tracer follows the otel.* settings and hands out the SDK tracer that
// matches them, or none when tracing is off.
type Tracer struct {
	setting Setting
	nodeID  string
	log     *slog.Logger
	queue   int // spans waiting for export at most
	c       counters
	mu      sync.Mutex
	cur     atomic.Pointer[state]
}

// state is one configuration and the provider built for it.
type state struct {
	cfg      config
	provider *sdktrace.TracerProvider // nil when off
	tracer   trace.Tracer
}

type config struct{ endpoint, service, headers string }

// New returns a Tracer reading its settings through setting; nodeID is
// written into every span's resource (svc.node_id); export failures are
// logged to log.
func New(setting Setting, nodeID string, log *slog.Logger) *Tracer {
	t := &Tracer{setting: setting, nodeID: nodeID, log: log, queue: 4096}
	t.cur.Store(&state{})
	return t
}

// Get returns the tracer for the current settings, or nil when
// otel.endpoint is empty.
func (t *Tracer) Get() trace.Tracer {
	if t == nil {
		return nil
	}
	c := config{endpoint: t.setting("otel.endpoint")}
	st := t.cur.Load()
	if c.endpoint == "" && st.provider == nil {
		return nil
	}
	c.service, c.headers = t.setting("otel.service_name"), t.setting("otel.headers")
	if c != st.cfg {
		st = t.swap(c)
	}
	return st.tracer
}

// swap builds the provider for c and retires the previous one (its
// queued spans are flushed in the background).
func (t *Tracer) swap(c config) *state {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.cur.Load()
	if old.cfg == c {
		return old
	}
	st := &state{cfg: c}
	if c.endpoint != "" {
		svc := c.service
		if svc == "" {
			svc = "svc"
		}
		res := resource.NewSchemaless(attribute.String("service.name", svc), attribute.String("svc.node_id", t.nodeID))
		pending := &atomic.Int64{}
		exp := newJSONExporter(TracesURL(c.endpoint), ParseHeaders(c.headers), t.log, &t.c, pending)
		// The batch processor never blocks a request: past the queue's
		// size a span is dropped and counted (drops.go).
		bsp := sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBatchTimeout(time.Second), sdktrace.WithMaxQueueSize(t.queue+1))
		st.provider = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
			sdktrace.WithSpanProcessor(&boundedProcessor{SpanProcessor: bsp, pending: pending, max: int64(t.queue), c: &t.c, log: t.log}),
		)
		st.tracer = st.provider.Tracer("svcd")
	}
	t.cur.Store(st)
	if old.provider != nil {
		go shutdown(old.provider)
	}
	return st
}

func shutdown(p *sdktrace.TracerProvider) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.Shutdown(ctx)
}

// Close flushes and stops the current provider.
func (t *Tracer) Close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.cur.Load().provider; p != nil {
		shutdown(p)
	}
	t.cur.Store(&state{})
}

// TracesURL appends /v1/traces to endpoint unless it ends with it.
func TracesURL(endpoint string) string {
	e := strings.TrimRight(strings.TrimSpace(endpoint), "/")
	if strings.HasSuffix(e, "/v1/traces") {
		return e
	}
	return e + "/v1/traces"
}

// ParseHeaders reads otel.headers: comma-separated key=value pairs.
func ParseHeaders(s string) map[string]string {
	h := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if k = strings.TrimSpace(k); ok && k != "" {
			h[k] = strings.TrimSpace(v)
		}
	}
	return h
}

// Phase starts a child span of the request span in ctx, named after a
// pipeline phase; it returns ctx and a no-op span when ctx carries no
// recording span (tracing off).
func Phase(ctx context.Context, name string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	return parent.TracerProvider().Tracer("svcd").Start(ctx, name)
}
