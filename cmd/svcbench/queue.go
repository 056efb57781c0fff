package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The queue scenario measures queue throughput (docs/jobs.md): --jobs
// queue jobs enqueued by --clients concurrent clients (POST
// /api/v1/admin/queues/:queue/jobs, through the nodes like the other
// scenarios), run by one worker of --worker-concurrency on the leader
// (its code returns the payload), until every one has succeeded. One pass,
// no warmup. It reports the enqueue requests (reqs, rps, latencies) and
// jobs=N jobs/s=X: the jobs run to success over the wall time from the
// first enqueue to the last success, as the queue's counts show it.

const (
	scQueue = "queue"
	// benchQueue is the queue the scenario fills.
	benchQueue = "bench_jobs"
	// queuePoll is how often the queue's counts are read.
	queuePoll = 50 * time.Millisecond
)

// queueCounts is one queue of GET /api/v1/admin/queues.
type queueCounts struct {
	Queue  string           `json:"queue"`
	Counts map[string]int64 `json:"counts"`
	Worker *string          `json:"worker"`
}

// benchQueueState reads the counts and the worker of benchQueue.
func (c *apiClient) benchQueueState(ctx context.Context) (queueCounts, error) {
	var out struct {
		Data []queueCounts `json:"data"`
	}
	if err := c.call(ctx, http.MethodGet, "/api/v1/admin/queues", nil, true, &out); err != nil {
		return queueCounts{}, err
	}
	for _, q := range out.Data {
		if q.Queue == benchQueue {
			return q, nil
		}
	}
	return queueCounts{Queue: benchQueue, Counts: map[string]int64{}}, nil
}

// ensureWorker makes benchQueue's worker run the payload back with
// concurrency, enabled.
func (c *apiClient) ensureWorker(ctx context.Context, concurrency int) error {
	q, err := c.benchQueueState(ctx)
	if err != nil {
		return err
	}
	body := map[string]any{"queue": benchQueue, "code": "return payload", "concurrency": concurrency, "enabled": true}
	if q.Worker != nil {
		return c.call(ctx, http.MethodPatch, "/api/v1/admin/workers/"+*q.Worker, body, true, nil)
	}
	return c.call(ctx, http.MethodPost, "/api/v1/admin/workers", body, true, nil)
}

// runQueue enqueues --jobs jobs and waits until the worker has run them
// all.
func runQueue(ctx context.Context, env scenarioEnv, cfg config, log io.Writer) (Result, error) {
	if err := env.api.ensureWorker(ctx, cfg.workerConcurrency); err != nil {
		return Result{}, fmt.Errorf("worker: %w", err)
	}
	before, err := env.api.benchQueueState(ctx)
	if err != nil {
		return Result{}, err
	}
	if open := before.Counts["queued"] + before.Counts["running"]; open > 0 {
		return Result{}, fmt.Errorf("queue %s still has %d jobs to run from an earlier run", benchQueue, open)
	}
	clients := min(env.clients, cfg.jobs)
	fmt.Fprintf(log, "%s: %d jobs enqueued by %d clients on %s, worker concurrency %d\n", scQueue, cfg.jobs, clients, env.nodes.describe(), cfg.workerConcurrency)
	var (
		mu      sync.Mutex
		lat     []time.Duration
		errs    int64
		samples = &errorSamples{max: 5}
	)
	metrics := env.api.nodeMetrics(ctx, env.nodes.bases)
	start := time.Now()
	err = forEach(ctx, cfg.jobs, clients, func(ctx context.Context, client, k int) error {
		base := env.nodes.bases[env.nodes.pick(&worker{id: client, turn: k})]
		t0 := time.Now()
		err := env.api.callAt(ctx, base, http.MethodPost, "/api/v1/admin/queues/"+benchQueue+"/jobs",
			map[string]any{"payload": map[string]any{"n": k}}, true, nil)
		el := time.Since(t0)
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, el)
		if err != nil {
			errs++
			samples.add(err.Error())
		}
		return nil
	})
	enqueued := time.Since(start)
	if err != nil {
		return Result{}, err
	}
	want := before.Counts["succeeded"] + int64(cfg.jobs) - errs
	var done int64
	for {
		q, err := env.api.benchQueueState(ctx)
		if err != nil {
			return Result{}, err
		}
		done = q.Counts["succeeded"] - before.Counts["succeeded"]
		if q.Counts["succeeded"] >= want {
			break
		}
		if dead := q.Counts["dead"] - before.Counts["dead"]; dead > 0 {
			return Result{}, fmt.Errorf("%d jobs died", dead)
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(queuePoll):
		}
	}
	elapsed := time.Since(start)
	after := env.api.nodeMetrics(ctx, env.nodes.bases)
	r := Result{
		Scenario: scQueue, Clients: clients, Nodes: len(env.nodes.bases), Spread: env.nodes.spread, Elapsed: elapsed,
		Requests: int64(cfg.jobs), Errors: errs, Latency: summarize(lat), Rows: done, ErrorSamples: samples.samples(),
	}
	if s := enqueued.Seconds(); s > 0 {
		r.RPS = float64(r.Requests) / s
	}
	if s := elapsed.Seconds(); s > 0 {
		r.RowsPS = float64(done) / s
	}
	// Per-request CPU covers the whole job (enqueue, claim, run,
	// completion): cpu/row is the CPU per job.
	r.Server = nodesDelta(metrics, after, r.Requests)
	r.Server.CPUPerReqMicros = nil
	if done == 0 {
		return r, errors.New("no job ran")
	}
	return r, nil
}
