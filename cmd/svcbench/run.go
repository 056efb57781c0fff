package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// worker is the state of one benchmark client. Each worker owns its latency
// slice, so the hot loop shares nothing but the http.Client and two atomics.
type worker struct {
	id      int
	seq     int // records created or updated, for unique bodies
	turn    int // requests sent to spread nodes
	rng     *rand.Rand
	lat     []time.Duration
	reqs    int64
	errs    int64
	precond int64 // 412 answers: failed If-Match, not errors
}

func newWorkers(n, latCap int) []*worker {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = &worker{
			id:  i,
			rng: rand.New(rand.NewPCG(uint64(i)+1, uint64(time.Now().UnixNano()))),
			lat: make([]time.Duration, 0, latCap),
		}
	}
	return ws
}

// latencyCap sizes each worker's latency slice for a measured phase so that
// appending rarely reallocates (it still grows if the guess is too low).
func latencyCap(d time.Duration) int {
	const perClientRate = 4000 // req/s one client might reach against localhost
	n := int(d.Seconds() * perClientRate)
	return min(max(n, 1024), 1<<22)
}

// errorSamples keeps the first few error descriptions of a scenario.
type errorSamples struct {
	max  int32
	seen atomic.Int32
	mu   sync.Mutex
	list []string
}

// wants reports whether another sample would still be kept (cheap check
// that lets the hot loop skip reading error bodies once it has enough).
func (s *errorSamples) wants() bool { return s != nil && s.seen.Load() < s.max }

func (s *errorSamples) add(msg string) {
	if s == nil || s.seen.Add(1) > s.max {
		return
	}
	s.mu.Lock()
	s.list = append(s.list, msg)
	s.mu.Unlock()
}

func (s *errorSamples) samples() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

// phase is the outcome of running all workers for one time window.
type phase struct {
	requests  int64
	errors    int64
	precond   int64
	elapsed   time.Duration
	latencies []time.Duration // merged, unsorted
}

// runPhase runs every worker until d has elapsed (requests already in
// flight at the deadline complete and count) or ctx is cancelled. Latencies
// are kept only when record is set. label prefixes error samples.
func runPhase(ctx context.Context, hc *http.Client, workers []*worker, d time.Duration, record bool, ld load, samples *errorSamples, label string) phase {
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, w := range workers {
		w.lat, w.reqs, w.errs, w.precond = w.lat[:0], 0, 0, 0
		wg.Go(func() { w.loop(ctx, hc, deadline, record, ld, samples, label) })
	}
	wg.Wait()
	p := phase{elapsed: time.Since(start)}
	parts := make([][]time.Duration, 0, len(workers))
	for _, w := range workers {
		p.requests += w.reqs
		p.errors += w.errs
		p.precond += w.precond
		parts = append(parts, w.lat)
	}
	if record {
		p.latencies = mergeLatencies(parts)
	}
	return p
}

// loop is the hot loop of one client. A 412 answer counts apart from the
// errors.
func (w *worker) loop(ctx context.Context, hc *http.Client, deadline time.Time, record bool, ld load, samples *errorSamples, label string) {
	for ctx.Err() == nil {
		req, err := ld.next(ctx, w)
		if err != nil {
			w.errs++
			samples.add(label + "building request: " + err.Error())
			return
		}
		start := time.Now()
		if !start.Before(deadline) {
			return
		}
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return // interrupted: neither a request nor an error
			}
			w.reqs++
			w.errs++
			if record {
				w.lat = append(w.lat, time.Since(start))
			}
			if samples.wants() {
				samples.add(label + err.Error())
			}
			continue
		}
		if ld.seen != nil {
			ld.seen(w, resp.StatusCode, resp.Header)
		}
		precond := resp.StatusCode == http.StatusPreconditionFailed
		ok := resp.StatusCode/100 == 2 || precond
		var errBody []byte
		if !ok && samples.wants() {
			errBody, _ = io.ReadAll(io.LimitReader(resp.Body, 512))
		}
		_, copyErr := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		elapsed := time.Since(start)
		if copyErr != nil && ctx.Err() != nil {
			return
		}
		w.reqs++
		if record {
			w.lat = append(w.lat, elapsed)
		}
		if precond {
			w.precond++
		}
		switch {
		case !ok:
			w.errs++
			if errBody != nil {
				samples.add(fmt.Sprintf("%s%s %s: HTTP %d: %s", label, req.Method, req.URL.RequestURI(), resp.StatusCode, errorMessage(errBody)))
			}
		case copyErr != nil:
			w.errs++
			if samples.wants() {
				samples.add(label + "reading body: " + copyErr.Error())
			}
		}
	}
}

// runScenario runs the warmup and the measured phase of one scenario and
// gathers client- and server-side figures.
func runScenario(ctx context.Context, env scenarioEnv, name string, ld load, warmup, dur time.Duration) Result {
	api, bases := env.api, env.nodes.bases
	workers := newWorkers(env.clients, latencyCap(dur))
	samples := &errorSamples{max: 5}
	if warmup > 0 {
		runPhase(ctx, api.hc, workers, warmup, false, ld, samples, "[warmup] ")
	}
	before := api.nodeMetrics(ctx, bases)
	p := runPhase(ctx, api.hc, workers, dur, true, ld, samples, "")
	after := api.nodeMetrics(ctx, bases)

	s := summarize(p.latencies)
	r := Result{
		Scenario:     name,
		Clients:      env.clients,
		Nodes:        len(env.nodes.bases),
		Spread:       env.nodes.spread,
		Elapsed:      p.elapsed,
		Requests:     p.requests,
		Errors:       p.errors,
		Precond:      p.precond,
		Latency:      s,
		ErrorSamples: samples.samples(),
	}
	if p.elapsed > 0 {
		r.RPS = float64(p.requests) / p.elapsed.Seconds()
	}
	if ld.rows > 0 {
		r.Rows = (p.requests - p.errors) * int64(ld.rows)
		if p.elapsed > 0 {
			r.RowsPS = float64(r.Rows) / p.elapsed.Seconds()
		}
	}
	if ld.bytes > 0 {
		r.FileSize = ld.bytes
		r.Bytes = (p.requests - p.errors) * ld.bytes
		if p.elapsed > 0 {
			r.MBPS = float64(r.Bytes) / 1e6 / p.elapsed.Seconds()
		}
	}
	r.Server = nodesDelta(before, after, p.requests)
	return r
}
