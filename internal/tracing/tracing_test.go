package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
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

// TestQueueFullDrops: with the collector stuck, spans past the queue's
// size are dropped and counted, and ending a span never waits; once the
// collector answers again the queued spans are delivered.
func TestQueueFullDrops(t *testing.T) {
	release := make(chan struct{})
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		got.Add(1)
	}))
	defer srv.Close()
	settings := map[string]string{"otel.endpoint": srv.URL}
	tr := New(func(k string) string { return settings[k] }, "n1", nil)
	tr.queue = 4
	start := time.Now()
	for range 50 {
		_, span := tr.Get().Start(context.Background(), "x")
		span.End()
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("ending 50 spans took %v", d)
	}
	if n := tr.Dropped(); n < 40 {
		t.Errorf("dropped %d of 50 spans with a queue of 4 and the collector stuck", n)
	}
	close(release)
	tr.Close()
	if got.Load() == 0 || tr.Failed() != 0 {
		t.Errorf("posts after release %d, failed %d", got.Load(), tr.Failed())
	}
}
