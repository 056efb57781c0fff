package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// The fan-out scenarios measure realtime delivery: one write reaching N
// subscribers (WebSocket or SSE, --transport), each subscribed to the
// benchmark collection and spread over the --urls nodes.
//
//	fanout       --subscribers N, then --writes K creates, one every
//	             --write-interval, sent to the first node. For each write
//	             and subscriber, the delay from sending the create to
//	             receiving its create event (matched by record id, which
//	             the create answer carries) gives p50/p99/max; a write a
//	             subscriber never got within fanoutDrain is missed.
//	fanout-rate  --subscribers N while --clients writers create records as
//	             fast as they can for --duration: events delivered per
//	             second in total and per subscriber, against the writes per
//	             second committed; missed events are counted after a drain.
//	             Each create carries its send time (fanout_delivery.go):
//	             every delivery's delay from send to receipt gives the
//	             delivery p50/p99/max, beside the writes' own latency.
//	fanout-idle  the server's resident memory (VmRSS of /proc/PID/status;
//	             --pid, else the pid of GET /api/v1/_/metrics when that
//	             process is visible here) before and after opening N idle
//	             subscriptions, divided by N.
//
// Opening many connections needs file descriptors: the program raises its
// RLIMIT_NOFILE to fit --subscribers (the server process needs its own
// limit raised too, e.g. `ulimit -n` before starting it).

// Fan-out scenario names.
const (
	scFanout     = "fanout"
	scFanoutRate = "fanout-rate"
	scFanoutIdle = "fanout-idle"
)

// fanoutDrain bounds the wait for events after the last write (a
// variable for the tests).
var fanoutDrain = 10 * time.Second

// fanoutSettle is the pause between opening idle subscriptions and reading
// the server's memory.
const fanoutSettle = 2 * time.Second

// isFanout reports whether a scenario is one of the fan-out ones.
func isFanout(name string) bool {
	return name == scFanout || name == scFanoutRate || name == scFanoutIdle
}

// FanoutFigures are the realtime figures of a fan-out scenario.
type FanoutFigures struct {
	Transport   string
	Subscribers int
	Open        time.Duration // opening and subscribing every subscriber
	Dropped     int           // subscriptions that ended during the run
	// fanout and fanout-rate: deliveries expected (writes × subscribers)
	// and missing after the drain.
	Expected int64
	Missed   int64
	// fanout-rate: creates and events per second in the measured phase.
	WritesPerSec    float64
	EventsPerSec    float64
	PerSubPerSec    float64
	DeliveryLatency bool // Result.Latency is delivery (fanout), else write latency
	// fanout-rate: per delivery, the delay from sending the create to the
	// subscriber's receipt of its event (the create carries its send time).
	Delivery Summary
	// fanout-idle: the server's VmRSS in KiB, and the growth per connection.
	RSSBeforeKiB, RSSAfterKiB int64
	PerConnKiB                float64
	ServerConns               *float64 // realtime_connections after opening, when reported
}

// runFanoutScenario opens the subscribers and runs one fan-out scenario.
func runFanoutScenario(ctx context.Context, env scenarioEnv, cfg config, name string, log io.Writer) (Result, error) {
	if raised, err := raiseNoFile(uint64(cfg.subscribers + 2*cfg.clients + 256)); err != nil {
		fmt.Fprintf(log, "note: could not raise RLIMIT_NOFILE: %v\n", err)
	} else if raised != "" {
		fmt.Fprintf(log, "raised RLIMIT_NOFILE %s\n", raised)
	}
	r := Result{Scenario: name, Clients: cfg.clients, Nodes: len(env.nodes.bases), Spread: env.nodes.spread}
	f := &FanoutFigures{Transport: cfg.transport, Subscribers: cfg.subscribers}
	r.Fanout = f

	var rssBefore int64
	pid := 0
	if name == scFanoutIdle {
		var err error
		if pid, err = serverPID(ctx, env.api, cfg.pid); err != nil {
			return r, err
		}
		if rssBefore, err = readRSS(pid); err != nil {
			return r, err
		}
	}
	fmt.Fprintf(log, "%s: opening %d %s subscriptions on %s\n", name, cfg.subscribers, cfg.transport, env.nodes.describe())
	start := time.Now()
	pool, err := openSubscribers(ctx, newDialer(cfg.transport), env.nodes.bases, env.coll, cfg.subscribers, name == scFanout, name == scFanoutRate, log)
	if err != nil {
		return r, err
	}
	defer pool.close()
	f.Open = time.Since(start)
	fmt.Fprintf(log, "%s: %d subscriptions open in %.1fs\n", name, cfg.subscribers, f.Open.Seconds())

	switch name {
	case scFanout:
		err = runFanoutWrites(ctx, env, cfg, pool, &r)
	case scFanoutRate:
		err = runFanoutRate(ctx, env, cfg, pool, &r)
	case scFanoutIdle:
		err = measureIdle(ctx, env, pool, pid, rssBefore, &r)
	}
	f.Dropped, _ = pool.dropped()
	if n, first := pool.dropped(); n > 0 {
		r.ErrorSamples = append(r.ErrorSamples, fmt.Sprintf("%d subscriptions ended; first: %v", n, first))
	}
	return r, err
}

// sentWrite is one create of the fanout scenario.
type sentWrite struct {
	id   string
	sent time.Time
}

// runFanoutWrites sends the spaced writes and matches every subscriber's
// receipts against them.
func runFanoutWrites(ctx context.Context, env scenarioEnv, cfg config, pool *subPool, r *Result) error {
	f := r.Fanout
	f.DeliveryLatency = true
	writes := make([]sentWrite, 0, cfg.writes)
	samples := &errorSamples{max: 5}
	start := time.Now()
	for k := range cfg.writes {
		t0 := time.Now()
		id, err := env.api.createRecord(ctx, env.coll, recordBody(make([]byte, 0, 64), -1, k))
		r.Requests++
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.Errors++
			samples.add(err.Error())
		} else {
			writes = append(writes, sentWrite{id: id, sent: t0})
		}
		if k < cfg.writes-1 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Until(t0.Add(cfg.writeInterval))):
			}
		}
	}
	pool.waitCreates(ctx, int64(len(writes)), fanoutDrain)
	r.Elapsed = time.Since(start)
	r.ErrorSamples = samples.samples()

	lat := make([]time.Duration, 0, len(writes)*len(pool.subs))
	at := make(map[string]time.Time, len(writes))
	for _, s := range pool.subs {
		clear(at)
		s.mu.Lock()
		for _, rc := range s.receipts {
			if _, dup := at[rc.id]; !dup {
				at[rc.id] = rc.at
			}
		}
		s.mu.Unlock()
		for _, w := range writes {
			if t, ok := at[w.id]; ok {
				lat = append(lat, t.Sub(w.sent))
			} else {
				f.Missed++
			}
		}
	}
	f.Expected = int64(len(writes)) * int64(len(pool.subs))
	r.Latency = summarize(lat)
	if len(writes) == 0 {
		return errors.New("fanout: no write succeeded")
	}
	return nil
}

// runFanoutRate runs --clients create workers for --duration while the
// subscribers count what they receive.
func runFanoutRate(ctx context.Context, env scenarioEnv, cfg config, pool *subPool, r *Result) error {
	f := r.Fanout
	ld := stampedCreateLoad(env)
	workers := newWorkers(env.clients, latencyCap(cfg.duration))
	samples := &errorSamples{max: 5}
	start := time.Now()
	pool.winEnd.Store(start.Add(cfg.duration + time.Hour).UnixNano())
	pool.winStart.Store(start.UnixNano())
	before := env.api.nodeMetrics(ctx, env.nodes.bases)
	p := runPhase(ctx, env.api.hc, workers, cfg.duration, true, ld, samples, "")
	end := start.Add(p.elapsed)
	pool.winEnd.Store(end.UnixNano())
	after := env.api.nodeMetrics(ctx, env.nodes.bases)
	if err := ctx.Err(); err != nil {
		return err
	}
	committed := p.requests - p.errors
	pool.waitCreates(ctx, committed, fanoutDrain)

	var inWindow, total int64
	for _, s := range pool.subs {
		inWindow += s.inWindow.Load()
		got := s.creates.Load()
		total += got
		f.Missed += max(0, committed-got)
	}
	r.Elapsed, r.Requests, r.Errors = p.elapsed, p.requests, p.errors
	r.Latency = summarize(p.latencies)
	f.Delivery = summarize(pool.deliveryLatencies())
	r.ErrorSamples = samples.samples()
	r.Server = nodesDelta(before, after, p.requests)
	f.Expected = committed * int64(len(pool.subs))
	if secs := p.elapsed.Seconds(); secs > 0 {
		r.RPS = float64(p.requests) / secs
		f.WritesPerSec = float64(committed) / secs
		f.EventsPerSec = float64(inWindow) / secs
		f.PerSubPerSec = f.EventsPerSec / float64(len(pool.subs))
	}
	return nil
}

// measureIdle reads the server's memory once the idle subscriptions are
// open and settled.
func measureIdle(ctx context.Context, env scenarioEnv, pool *subPool, pid int, before int64, r *Result) error {
	f := r.Fanout
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(fanoutSettle):
	}
	after, err := readRSS(pid)
	if err != nil {
		return err
	}
	f.RSSBeforeKiB, f.RSSAfterKiB = before, after
	f.PerConnKiB = float64(after-before) / float64(len(pool.subs))
	var conns float64
	for _, m := range env.api.nodeMetricsRaw(ctx, env.nodes.bases) {
		v, ok := m["realtime_connections"].(float64)
		if !ok {
			return nil
		}
		conns += v
	}
	f.ServerConns = &conns
	return nil
}

// validTransport reports whether t names a transport.
func validTransport(t string) bool { return slices.Contains([]string{transportWS, transportSSE}, t) }
