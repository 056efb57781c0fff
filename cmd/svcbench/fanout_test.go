package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"svcd/api"
	"svcd/cmd/svcd/stack"
	"svcd/engine/password"
)

// realtimeNode is realNode with the realtime hub mounted (WebSocket and
// SSE), served on a loopback port.
func realtimeNode(t *testing.T) string {
	t.Helper()
	srv, _ := serveNode(t, realtimeHandler(t), nil)
	return srv.URL
}

// realtimeHandler is the HTTP handler of a real node with realtime.
func realtimeHandler(t *testing.T) http.Handler {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	st, err := stack.Open(stack.Config{
		DataDir:        t.TempDir(),
		PasswordParams: password.Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32},
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return api.New(st.APIOptions(log))
}

func fanoutConfig(url, scenario, transport string) config {
	cfg := testConfig(url, scenario)
	cfg.setupKey = ""
	cfg.fresh = false
	cfg.collection = "bench_fanout"
	cfg.subscribers = 50
	cfg.transport = transport
	cfg.writes = 5
	cfg.writeInterval = 20 * time.Millisecond
	cfg.json = true
	return cfg
}

// jsonLine decodes the JSON line of a one-scenario run.
func jsonLine(t *testing.T, out string) jsonResult {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var j jsonResult
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &j) != nil || j.Fanout == nil {
		t.Fatalf("output %q: want a table line and a JSON line with fanout", out)
	}
	return j
}

// TestFanoutScenario: 50 subscribers get each of 5 writes, over both
// transports, and every delivery is timed.
func TestFanoutScenario(t *testing.T) {
	url := realtimeNode(t)
	for _, tr := range []string{transportWS, transportSSE} {
		t.Run(tr, func(t *testing.T) {
			cfg := fanoutConfig(url, scFanout, tr)
			res, out, log := runBench(t, cfg)
			r := res[0]
			f := r.Fanout
			if f == nil || r.Requests != 5 || r.Errors != 0 {
				t.Fatalf("result %+v\n%s%s", r, out, log)
			}
			if f.Expected != 250 || r.Latency.Count != 250 || f.Missed != 0 || f.Dropped != 0 {
				t.Errorf("expected=%d delivered=%d missed=%d dropped=%d, want 250 delivered of 250\n%s%s",
					f.Expected, r.Latency.Count, f.Missed, f.Dropped, out, log)
			}
			if l := r.Latency; l.Min <= 0 || l.P50 > l.P99 || l.P99 > l.Max || l.Max > 5*time.Second {
				t.Errorf("delivery latencies %+v", l)
			}
			if !strings.HasPrefix(out, "fanout       transport="+tr+"  subscribers=50  ") ||
				!strings.Contains(out, "writes=5  deliveries=250  p50=") || !strings.Contains(out, "missed=0") {
				t.Errorf("table line: %q", out)
			}
			if j := jsonLine(t, out); j.Fanout.Latency != "delivery" || j.Fanout.Expected != 250 || j.Fanout.Transport != tr || j.P50Ms <= 0 {
				t.Errorf("JSON %+v %+v", j, j.Fanout)
			}
		})
	}
}

// TestFanoutSpread: with --urls, subscriber i opens on node i mod n (two
// front servers of one node stand for two nodes) and still gets every
// write, which goes to the first.
func TestFanoutSpread(t *testing.T) {
	h := realtimeHandler(t)
	isStream := func(r *http.Request) bool {
		return r.URL.Path == "/realtime" || (r.Method == http.MethodGet && r.URL.Path == "/api/v1/realtime")
	}
	a, hitsA := serveNode(t, h, isStream)
	b, hitsB := serveNode(t, h, isStream)
	for _, tr := range []string{transportWS, transportSSE} {
		cfg := fanoutConfig("", scFanout, tr)
		cfg.urls = []string{a.URL, b.URL}
		cfg.subscribers, cfg.writes = 9, 3
		hitsA.Store(0)
		hitsB.Store(0)
		res, out, log := runBench(t, cfg)
		if f := res[0].Fanout; f.Expected != 27 || f.Missed != 0 || res[0].Nodes != 2 {
			t.Errorf("%s: expected=%d missed=%d nodes=%d\n%s%s", tr, f.Expected, f.Missed, res[0].Nodes, out, log)
		}
		if hitsA.Load() != 5 || hitsB.Load() != 4 {
			t.Errorf("%s: streams opened on the nodes: %d and %d, want 5 and 4", tr, hitsA.Load(), hitsB.Load())
		}
		if !strings.Contains(out, "nodes=2") {
			t.Errorf("%s: table line %q", tr, out)
		}
	}
}

// TestFanoutMissed: subscribers that may not view the records written
// (the view rule admits no title the writes use; subscribers are
// anonymous) get nothing, and every delivery counts as missed.
func TestFanoutMissed(t *testing.T) {
	url := realtimeNode(t)
	cfg := fanoutConfig(url, scFanout, transportWS)
	cfg.collection = "bench_locked"
	cfg.subscribers, cfg.writes = 5, 2
	api := newAPIClient(url, newHTTPClient(1, 5*time.Second), "")
	ctx := context.Background()
	if err := api.authenticate(ctx, cfg.email, cfg.password); err != nil {
		t.Fatal(err)
	}
	def := map[string]any{"name": cfg.collection, "type": "base", "create_rule": "", "view_rule": `title = "nobody"`,
		"fields": []map[string]string{{"name": "title", "type": "text"}, {"name": "n", "type": "number"}, {"name": "done", "type": "bool"}}}
	if err := api.call(ctx, http.MethodPost, "/api/v1/admin/collections", def, true, nil); err != nil {
		t.Fatal(err)
	}
	old := fanoutDrain
	fanoutDrain = 300 * time.Millisecond
	defer func() { fanoutDrain = old }()
	res, out, log := runBench(t, cfg)
	if f := res[0].Fanout; f.Expected != 10 || f.Missed != 10 || res[0].Latency.Count != 0 {
		t.Errorf("expected=%d missed=%d delivered=%d, want all 10 missed\n%s%s", f.Expected, f.Missed, res[0].Latency.Count, out, log)
	}
}

// TestFanoutRate: writers create as fast as they can; every committed
// create reaches every subscriber and the rates agree.
func TestFanoutRate(t *testing.T) {
	url := realtimeNode(t)
	for _, tr := range []string{transportWS, transportSSE} {
		t.Run(tr, func(t *testing.T) {
			cfg := fanoutConfig(url, scFanoutRate, tr)
			cfg.subscribers, cfg.clients, cfg.duration = 20, 2, 500*time.Millisecond
			res, out, log := runBench(t, cfg)
			r := res[0]
			f := r.Fanout
			committed := r.Requests - r.Errors
			if committed < 10 || r.Errors != 0 || f.Missed != 0 || f.Dropped != 0 || f.Expected != 20*committed {
				t.Fatalf("writes=%d errors=%d missed=%d dropped=%d expected=%d\n%s%s", r.Requests, r.Errors, f.Missed, f.Dropped, f.Expected, out, log)
			}
			// Events received inside the window: at most every commit to
			// every subscriber, and most of them on loopback.
			if f.EventsPerSec > 20*f.WritesPerSec*1.001 || f.EventsPerSec < 20*f.WritesPerSec*0.5 {
				t.Errorf("events/s %.0f for %.0f writes/s to 20 subscribers", f.EventsPerSec, f.WritesPerSec)
			}
			if f.PerSubPerSec*20 < f.EventsPerSec*0.999 || f.PerSubPerSec*20 > f.EventsPerSec*1.001 {
				t.Errorf("per-sub %.1f/s, total %.1f/s", f.PerSubPerSec, f.EventsPerSec)
			}
			// Every delivery of a stamped create is a delivery-latency
			// sample, each at least 0 and within the drain.
			if d := f.Delivery; int64(d.Count) != 20*committed || d.Min < 0 || d.P50 > d.P99 || d.Max > fanoutDrain {
				t.Errorf("delivery latency %+v for %d deliveries", d, 20*committed)
			}
			if !strings.Contains(out, "writers=2") || !strings.Contains(out, "events/s=") || !strings.Contains(out, "delivery-p99=") {
				t.Errorf("table line %q", out)
			}
		})
	}
}

// TestFanoutIdle reads this process's memory (the node runs in it) and the
// node's count of realtime connections.
func TestFanoutIdle(t *testing.T) {
	url := realtimeNode(t)
	cfg := fanoutConfig(url, scFanoutIdle, transportSSE)
	cfg.pid = os.Getpid()
	res, out, log := runBench(t, cfg)
	f := res[0].Fanout
	if f.RSSBeforeKiB <= 0 || f.RSSAfterKiB <= 0 || f.ServerConns == nil || *f.ServerConns != 50 {
		t.Fatalf("figures %+v\n%s%s", f, out, log)
	}
	if want := float64(f.RSSAfterKiB-f.RSSBeforeKiB) / 50; f.PerConnKiB != want {
		t.Errorf("per-conn %v KiB, want %v", f.PerConnKiB, want)
	}
	if !strings.Contains(out, "server-conns=50") || !strings.Contains(out, "per-conn=") {
		t.Errorf("table line %q", out)
	}
	if _, err := readRSS(1 << 30); err == nil {
		t.Error("readRSS of a pid that does not exist succeeded")
	}
}

func TestFanoutFlags(t *testing.T) {
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil || c.subscribers != 100 || c.transport != transportWS || c.writes != 20 || c.writeInterval != 250*time.Millisecond || c.pid != 0 {
		t.Errorf("defaults %+v, %v", c, err)
	}
	c, err = parseFlags([]string{"--scenario", "fanout,fanout-rate,fanout-idle", "--subscribers", "10000", "--transport", "sse", "--writes", "3", "--pid", "42"}, &bytes.Buffer{})
	if err != nil || c.subscribers != 10000 || c.transport != transportSSE || c.writes != 3 || c.pid != 42 ||
		strings.Join(scenarios(c.scenario), ",") != "fanout,fanout-rate,fanout-idle" {
		t.Errorf("parsed %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"--transport", "udp"}, {"--subscribers", "0"}, {"--writes", "0"}, {"--write-interval", "-1s"}, {"--pid", "-3"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%v) accepted", bad)
		}
	}
	if needsRows(scFanout) || needsRows(scFanoutRate) || needsRows(scFanoutIdle) {
		t.Error("fan-out scenarios do not seed rows")
	}
}
