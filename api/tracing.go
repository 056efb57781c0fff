package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceRequests opens the request's root span when otel.endpoint is set
// (docs/operations.md "Traces"): a child of the W3C traceparent the
// client sent, named after the route, with its method, route and status.
// With tracing off it costs one settings lookup.
func (s *Server) traceRequests(next http.Handler) http.Handler {
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr := s.tracer.Get()
		if tr == nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tr.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
		defer span.End()
		rec := &spanRecorder{statusRecorder: statusRecorder{ResponseWriter: w, status: http.StatusOK}, tr: tr, ctx: ctx}
		next.ServeHTTP(rec, r.WithContext(ctx))
		if rec.resp != nil {
			rec.resp.End()
		}
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if route := rc.RoutePattern(); route != "" {
				span.SetName(r.Method + " " + route)
				span.SetAttributes(attribute.String("http.route", route))
			}
		}
		span.SetAttributes(attribute.Int("http.response.status_code", rec.status))
		if rec.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(rec.status))
		}
	})
}

// spanRecorder opens the "response" phase span at the status line; it
// ends when the handler returns (the body written).
type spanRecorder struct {
	statusRecorder
	tr   trace.Tracer
	ctx  context.Context
	resp trace.Span
}

func (r *spanRecorder) WriteHeader(code int) {
	if r.resp == nil {
		_, r.resp = r.tr.Start(r.ctx, "response")
	}
	r.statusRecorder.WriteHeader(code)
}

func (r *spanRecorder) Write(b []byte) (int, error) {
	if r.resp == nil {
		r.WriteHeader(http.StatusOK)
	}
	return r.statusRecorder.Write(b)
}
