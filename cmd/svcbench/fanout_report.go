package main

import (
	"fmt"
	"strings"
)

// formatFanoutLine renders a fan-out result as one table line.
func formatFanoutLine(r Result) string {
	f := r.Fanout
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s  transport=%s  subscribers=%d", r.Scenario, f.Transport, f.Subscribers)
	if r.Nodes > 1 {
		fmt.Fprintf(&b, "  nodes=%d", r.Nodes)
	}
	fmt.Fprintf(&b, "  open=%.1fs", f.Open.Seconds())
	switch r.Scenario {
	case scFanout:
		fmt.Fprintf(&b, "  writes=%d  deliveries=%d  p50=%s p99=%s max=%s  missed=%d",
			r.Requests-r.Errors, r.Latency.Count,
			formatLatency(r.Latency.P50), formatLatency(r.Latency.P99), formatLatency(r.Latency.Max), f.Missed)
	case scFanoutRate:
		fmt.Fprintf(&b, "  writers=%d  dur=%.1fs  writes/s=%.0f  events/s=%.0f  per-sub=%.0f/s  missed=%d  write-p50=%s write-p99=%s  delivery-p50=%s delivery-p99=%s delivery-max=%s",
			r.Clients, r.Elapsed.Seconds(), f.WritesPerSec, f.EventsPerSec, f.PerSubPerSec, f.Missed,
			formatLatency(r.Latency.P50), formatLatency(r.Latency.P99),
			formatLatency(f.Delivery.P50), formatLatency(f.Delivery.P99), formatLatency(f.Delivery.Max))
	case scFanoutIdle:
		fmt.Fprintf(&b, "  rss=%s→%s  per-conn=%sKiB", formatKiB(f.RSSBeforeKiB), formatKiB(f.RSSAfterKiB), sig3(f.PerConnKiB))
		if f.ServerConns != nil {
			fmt.Fprintf(&b, "  server-conns=%.0f", *f.ServerConns)
		}
	}
	if r.Scenario != scFanoutIdle {
		fmt.Fprintf(&b, "  errors=%d", r.Errors)
	}
	fmt.Fprintf(&b, "  dropped=%d", f.Dropped)
	return b.String()
}

// formatKiB renders a KiB figure in MiB with three significant digits.
func formatKiB(kib int64) string { return sig3(float64(kib)/1024) + "MiB" }

// jsonFanout is the fan-out part of a --json line.
type jsonFanout struct {
	Transport    string   `json:"transport"`
	Subscribers  int      `json:"subscribers"`
	OpenSec      float64  `json:"open_s"`
	Dropped      int      `json:"dropped"`
	Expected     int64    `json:"expected_deliveries,omitempty"`
	Missed       int64    `json:"missed"`
	Latency      string   `json:"latency"` // what the result's p50_ms... measure
	WritesPerSec float64  `json:"writes_per_s,omitempty"`
	EventsPerSec float64  `json:"events_per_s,omitempty"`
	PerSubPerSec float64  `json:"events_per_s_per_subscriber,omitempty"`
	Deliveries   int      `json:"deliveries,omitempty"` // fanout-rate: delivery latency samples
	DeliveryP50  float64  `json:"delivery_p50_ms,omitempty"`
	DeliveryP99  float64  `json:"delivery_p99_ms,omitempty"`
	DeliveryMax  float64  `json:"delivery_max_ms,omitempty"`
	RSSBeforeKiB int64    `json:"rss_before_kib,omitempty"`
	RSSAfterKiB  int64    `json:"rss_after_kib,omitempty"`
	PerConnKiB   float64  `json:"rss_per_conn_kib,omitempty"`
	ServerConns  *float64 `json:"server_connections,omitempty"`
}

func fanoutJSON(f *FanoutFigures) *jsonFanout {
	if f == nil {
		return nil
	}
	lat := "write"
	if f.DeliveryLatency {
		lat = "delivery"
	}
	return &jsonFanout{
		Transport: f.Transport, Subscribers: f.Subscribers, OpenSec: f.Open.Seconds(), Dropped: f.Dropped,
		Expected: f.Expected, Missed: f.Missed, Latency: lat,
		WritesPerSec: f.WritesPerSec, EventsPerSec: f.EventsPerSec, PerSubPerSec: f.PerSubPerSec,
		Deliveries: f.Delivery.Count, DeliveryP50: ms(f.Delivery.P50), DeliveryP99: ms(f.Delivery.P99), DeliveryMax: ms(f.Delivery.Max),
		RSSBeforeKiB: f.RSSBeforeKiB, RSSAfterKiB: f.RSSAfterKiB, PerConnKiB: f.PerConnKiB, ServerConns: f.ServerConns,
	}
}
