package tracing

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// jsonExporter is an sdktrace.SpanExporter that posts OTLP over HTTP with
// the JSON encoding (SPEC.md): the SDK's otlptracehttp exporter only sends
// protobuf. The endpoint is set by an operator (an owner-only setting), so
// no SSRF guard applies; the client has timeouts so a dead collector never
// holds the batch processor long.
type jsonExporter struct {
	url     string
	headers map[string]string
	client  *http.Client
	log     *slog.Logger
	c       *counters
	pending *atomic.Int64 // spans ended and not yet exported (drops.go)
}

func newJSONExporter(url string, headers map[string]string, log *slog.Logger, c *counters, pending *atomic.Int64) *jsonExporter {
	return &jsonExporter{url: url, headers: headers, client: &http.Client{Timeout: 5 * time.Second}, log: log, c: c, pending: pending}
}

// ExportSpans posts spans; a failure is counted and logged (the first,
// then every hundredth), never handed to the SDK's global error handler,
// which would print each one.
func (e *jsonExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	defer e.pending.Add(-int64(len(spans)))
	if err := e.post(ctx, spans); err != nil {
		if n := e.c.failed.Add(1); n%100 == 1 && e.log != nil {
			e.log.Warn("trace export failed", "endpoint", e.url, "failures", n, "err", err)
		}
	}
	return nil
}

// post encodes spans as one OTLP JSON export request and posts it.
func (e *jsonExporter) post(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(toTraces(spans)).MarshalJSON()
	if err != nil {
		return fmt.Errorf("tracing: encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("tracing: post: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("tracing: collector answered %s", resp.Status)
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter.
func (e *jsonExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// toTraces groups spans by resource and instrumentation scope.
func toTraces(spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	td := ptrace.NewTraces()
	type key struct{ res, scope string }
	scopes := map[key]ptrace.ScopeSpans{}
	resources := map[string]ptrace.ResourceSpans{}
	for _, s := range spans {
		rk := s.Resource().String()
		rs, ok := resources[rk]
		if !ok {
			rs = td.ResourceSpans().AppendEmpty()
			putAttrs(rs.Resource().Attributes(), s.Resource().Attributes())
			resources[rk] = rs
		}
		k := key{rk, s.InstrumentationScope().Name}
		ss, ok := scopes[k]
		if !ok {
			ss = rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(s.InstrumentationScope().Name)
			ss.Scope().SetVersion(s.InstrumentationScope().Version)
			scopes[k] = ss
		}
		putSpan(ss.Spans().AppendEmpty(), s)
	}
	return td
}

func putSpan(sp ptrace.Span, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	sp.SetTraceID(pcommon.TraceID(sc.TraceID()))
	sp.SetSpanID(pcommon.SpanID(sc.SpanID()))
	sp.TraceState().FromRaw(sc.TraceState().String())
	if p := s.Parent(); p.IsValid() {
		sp.SetParentSpanID(pcommon.SpanID(p.SpanID()))
	}
	sp.SetName(s.Name())
	sp.SetKind(spanKind(s.SpanKind()))
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.StartTime()))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.EndTime()))
	putAttrs(sp.Attributes(), s.Attributes())
	switch s.Status().Code {
	case codes.Error:
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(s.Status().Description)
	case codes.Ok:
		sp.Status().SetCode(ptrace.StatusCodeOk)
	}
	for _, ev := range s.Events() {
		e := sp.Events().AppendEmpty()
		e.SetName(ev.Name)
		e.SetTimestamp(pcommon.NewTimestampFromTime(ev.Time))
		putAttrs(e.Attributes(), ev.Attributes)
	}
	for _, l := range s.Links() {
		pl := sp.Links().AppendEmpty()
		pl.SetTraceID(pcommon.TraceID(l.SpanContext.TraceID()))
		pl.SetSpanID(pcommon.SpanID(l.SpanContext.SpanID()))
		putAttrs(pl.Attributes(), l.Attributes)
	}
}

func spanKind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	case trace.SpanKindInternal:
		return ptrace.SpanKindInternal
	}
	return ptrace.SpanKindUnspecified
}

func putAttrs(m pcommon.Map, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		k := string(kv.Key)
		switch kv.Value.Type() {
		case attribute.BOOL:
			m.PutBool(k, kv.Value.AsBool())
		case attribute.INT64:
			m.PutInt(k, kv.Value.AsInt64())
		case attribute.FLOAT64:
			m.PutDouble(k, kv.Value.AsFloat64())
		case attribute.STRING:
			m.PutStr(k, kv.Value.AsString())
		default:
			m.PutStr(k, kv.Value.String())
		}
	}
}
