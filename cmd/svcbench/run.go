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

// Scenario names.
const (
	scCreate = "create"
	scGet    = "get"
	scList   = "list"
	scMixed  = "mixed"
	scAll    = "all"
)

// Mix of the mixed scenario, in percent: the rest are list requests.
const (
	mixedCreatePct = 20
	mixedGetPct    = 60
)

// worker is the state of one benchmark client. Each worker owns its latency
// slice, so the hot loop shares nothing but the http.Client and two atomics.
type worker struct {
	id   int
	seq  int
	rng  *rand.Rand
	lat  []time.Duration
	reqs int64
	errs int64
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

// requestFunc builds the next request of a worker.
type requestFunc func(ctx context.Context, w *worker) (*http.Request, error)

// scenarioRequests returns the request generator of a scenario. ids are the
// record ids the get requests pick from.
func scenarioRequests(name string, api *apiClient, coll string, ids []string, skipTotal bool) (requestFunc, error) {
	create := func(ctx context.Context, w *worker) (*http.Request, error) {
		body := recordBody(make([]byte, 0, 64), w.id, w.seq)
		w.seq++
		return api.createRequest(ctx, coll, body)
	}
	get := func(ctx context.Context, w *worker) (*http.Request, error) {
		return api.getRequest(ctx, coll, ids[w.rng.IntN(len(ids))])
	}
	listURL := api.listURL(coll, skipTotal)
	list := func(ctx context.Context, w *worker) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, listURL, nil)
	}
	switch name {
	case scCreate:
		return create, nil
	case scList:
		return list, nil
	case scGet, scMixed:
		if len(ids) == 0 {
			return nil, fmt.Errorf("%s: no record ids to fetch (is --seed-rows 0 on an empty collection?)", name)
		}
		if name == scGet {
			return get, nil
		}
		return func(ctx context.Context, w *worker) (*http.Request, error) {
			switch r := w.rng.IntN(100); {
			case r < mixedCreatePct:
				return create(ctx, w)
			case r < mixedCreatePct+mixedGetPct:
				return get(ctx, w)
			default:
				return list(ctx, w)
			}
		}, nil
	}
	return nil, fmt.Errorf("unknown scenario %q", name)
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
	elapsed   time.Duration
	latencies []time.Duration // merged, unsorted
}

// runPhase runs every worker until d has elapsed (requests already in
// flight at the deadline complete and count) or ctx is cancelled. Latencies
// are kept only when record is set. label prefixes error samples.
func runPhase(ctx context.Context, hc *http.Client, workers []*worker, d time.Duration, record bool, mk requestFunc, samples *errorSamples, label string) phase {
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, w := range workers {
		w.lat, w.reqs, w.errs = w.lat[:0], 0, 0
		wg.Go(func() { w.loop(ctx, hc, deadline, record, mk, samples, label) })
	}
	wg.Wait()
	p := phase{elapsed: time.Since(start)}
	parts := make([][]time.Duration, 0, len(workers))
	for _, w := range workers {
		p.requests += w.reqs
		p.errors += w.errs
		parts = append(parts, w.lat)
	}
	if record {
		p.latencies = mergeLatencies(parts)
	}
	return p
}

// loop is the hot loop of one client.
func (w *worker) loop(ctx context.Context, hc *http.Client, deadline time.Time, record bool, mk requestFunc, samples *errorSamples, label string) {
	for ctx.Err() == nil {
		req, err := mk(ctx, w)
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
		ok := resp.StatusCode/100 == 2
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
func runScenario(ctx context.Context, api *apiClient, name string, mk requestFunc, clients int, warmup, dur time.Duration) Result {
	workers := newWorkers(clients, latencyCap(dur))
	samples := &errorSamples{max: 5}
	if warmup > 0 {
		runPhase(ctx, api.hc, workers, warmup, false, mk, samples, "[warmup] ")
	}
	before := api.metrics(ctx)
	p := runPhase(ctx, api.hc, workers, dur, true, mk, samples, "")
	after := api.metrics(ctx)

	s := summarize(p.latencies)
	r := Result{
		Scenario:     name,
		Clients:      clients,
		Elapsed:      p.elapsed,
		Requests:     p.requests,
		Errors:       p.errors,
		Latency:      s,
		ErrorSamples: samples.samples(),
	}
	if p.elapsed > 0 {
		r.RPS = float64(p.requests) / p.elapsed.Seconds()
	}
	r.Server = serverDelta(before, after, p.requests)
	return r
}

// seed creates n records using clients concurrent workers and returns their
// ids. It stops at the first failure.
func seed(ctx context.Context, api *apiClient, coll string, n, clients int) ([]string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	parts := make([][]string, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				k := next.Add(1) - 1
				if k >= int64(n) {
					return
				}
				id, err := api.createRecord(ctx, coll, recordBody(make([]byte, 0, 64), -1-i, int(k)))
				if err != nil {
					cancel(fmt.Errorf("seeding record %d: %w", k, err))
					return
				}
				if id != "" {
					parts[i] = append(parts[i], id)
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range parts {
		ids = append(ids, p...)
	}
	return ids, nil
}
