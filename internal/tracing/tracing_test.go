package tracing

import (
	"context"
	"testing"
)

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://c:4318":            "http://c:4318/v1/traces",
		"http://c:4318/":           "http://c:4318/v1/traces",
		"http://c:4318/v1/traces":  "http://c:4318/v1/traces",
		"https://x.example/otlp/":  "https://x.example/otlp/v1/traces",
		" http://c:4318/v1/traces": "http://c:4318/v1/traces",
	} {
		if got := TracesURL(in); got != want {
			t.Errorf("TracesURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	h := ParseHeaders(" authorization=Bearer abc , x-team=ops,broken,=v,")
	if len(h) != 2 || h["authorization"] != "Bearer abc" || h["x-team"] != "ops" {
		t.Fatalf("ParseHeaders = %v", h)
	}
}

// TestOffMakesNoSpans: with otel.endpoint empty there is no tracer, and
// Phase hands back the context unchanged with a span that records nothing.
func TestOffMakesNoSpans(t *testing.T) {
	tr := New(func(string) string { return "" }, "n1", nil)
	if tr.Get() != nil {
		t.Fatal("a tracer while otel.endpoint is empty")
	}
	ctx := context.Background()
	got, span := Phase(ctx, "auth")
	if got != ctx || span.IsRecording() {
		t.Fatal("Phase made a span with tracing off")
	}
}

// BenchmarkOff is the cost per request of tracing while it is off (one
// settings lookup and one phase check); docs/benchmarks.md records it.
func BenchmarkOff(b *testing.B) {
	settings := map[string]string{"otel.service_name": "svc"}
	tr := New(func(k string) string { return settings[k] }, "n1", nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if tr.Get() != nil {
			b.Fatal("on")
		}
		_, span := Phase(ctx, "auth")
		span.End()
	}
}
