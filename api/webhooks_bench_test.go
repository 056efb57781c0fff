package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Benchmarks of webhooks (docs/benchmarks.md, "Webhooks"), against a real
// node and a real receiver on loopback.

// benchWebhookNode is a node with a public collection bench, a receiver
// that answers after delay, and (when events is not nil) a webhook on
// them.
func benchWebhookNode(b *testing.B, delay time.Duration, events []string) (*apitest.Server, *receiver) {
	b.Helper()
	// A negative interval keeps the dispatcher's default tick (2 s): the
	// deliveries go out as their commits wake it.
	s := startWebhookNode(b, apitest.Options{WebhookInterval: -1})
	s.CreateCollection(b, public(coll("bench", "base", []map[string]any{f("title", "text"), f("n", "number")})))
	stop := make(chan struct{})
	rc := newReceiver(b, func(n int, w http.ResponseWriter, r *http.Request) {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
			case <-stop:
			}
		}
	})
	b.Cleanup(func() { close(stop) }) // before the receiver closes
	if events != nil {
		createWebhook(b, s, map[string]any{"url": rc.URL, "events": events})
	}
	return s, rc
}

// BenchmarkWebhookDeliveries: each iteration creates 1,000 records in ten
// batches and waits until the receiver got their 1,000 deliveries:
// deliveries/s end to end (queued in the batches' applies, claimed, sent,
// recorded), with a receiver that answers at once and one that takes
// 10 ms (the sends overlap up to webhooks.concurrency, 10).
func BenchmarkWebhookDeliveries(b *testing.B) {
	for _, delay := range []time.Duration{0, 10 * time.Millisecond} {
		b.Run(fmt.Sprintf("receiver=%s", delay), func(b *testing.B) {
			s, rc := benchWebhookNode(b, delay, []string{"bench.create"})
			var sb strings.Builder
			sb.WriteString(`{"requests":[`)
			for i := range 100 {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"method":"POST","url":"/api/v1/bench","body":{"title":"t%d","n":%d}}`, i, i)
			}
			sb.WriteString(`]}`)
			body := sb.String()
			h := map[string]string{"Content-Type": "application/json"}
			want := 0
			for b.Loop() {
				for range 10 {
					if st, out, err := post(s.Client, s.URL+batchURL, body, h); err != nil || st != http.StatusOK {
						b.Fatalf("batch: %d %s %v", st, out, err)
					}
				}
				want += 1000
				for len(rc.requests()) < want {
					time.Sleep(time.Millisecond)
				}
			}
			b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkRecordCreateWebhook: one client creating records one after
// the other, with no webhook, with a matching webhook whose deliveries
// are only queued (its receiver holds every request, so the dispatcher
// stops claiming once its slots are full: the cost of the outbox write in
// the apply), and with a matching webhook whose deliveries are sent (the
// dispatcher's claims, sends and outcomes compete with the creates).
func BenchmarkRecordCreateWebhook(b *testing.B) {
	for _, c := range []struct {
		name   string
		events []string
		delay  time.Duration
	}{
		{"none", nil, 0},
		{"queued", []string{"bench.create"}, time.Hour},
		{"sent", []string{"bench.create"}, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, _ := benchWebhookNode(b, c.delay, c.events)
			url := s.URL + "/api/v1/bench"
			h := map[string]string{"Content-Type": "application/json"}
			i := 0
			for b.Loop() {
				i++
				if st, out, err := post(s.Client, url, fmt.Sprintf(`{"title":"t%d","n":%d}`, i, i), h); err != nil || st != http.StatusCreated {
					b.Fatalf("create: %d %s %v", st, out, err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
