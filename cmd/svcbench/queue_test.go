package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestQueueScenario: the queue scenario enqueues --jobs jobs, every one
// of which the node's worker runs to success, and reports them as jobs;
// a second run on the same node reuses the worker and counts only its own
// jobs.
func TestQueueScenario(t *testing.T) {
	srv, enqueues := serveNode(t, realNode(t), func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Path == "/api/v1/admin/queues/"+benchQueue+"/jobs"
	})
	cfg := testConfig(srv.URL, scQueue)
	cfg.jobs = 300
	cfg.workerConcurrency = 8
	for run := 1; run <= 2; run++ {
		res, out, log := runBench(t, cfg)
		if len(res) != 1 {
			t.Fatalf("%d results\n%s%s", len(res), out, log)
		}
		r := res[0]
		if r.Requests != 300 || r.Errors != 0 || r.Rows != 300 || r.Latency.Count != 300 || r.RowsPS <= 0 || r.RPS < r.RowsPS {
			t.Fatalf("run %d: %+v", run, r)
		}
		if line := formatLine(r); !strings.Contains(line, "jobs=300") || !strings.Contains(line, "jobs/s=") {
			t.Errorf("line %q", line)
		}
	}
	if enqueues.Load() != 600 {
		t.Errorf("the server saw %d enqueues, want 600", enqueues.Load())
	}
	a := newAPIClient(srv.URL, newHTTPClient(1, cfg.timeout), cfg.setupKey)
	if err := a.authenticate(context.Background(), cfg.email, cfg.password); err != nil {
		t.Fatal(err)
	}
	q, err := a.benchQueueState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if q.Counts["succeeded"] != 600 || q.Counts["queued"]+q.Counts["running"]+q.Counts["dead"] != 0 || q.Worker == nil {
		t.Fatalf("the queue after two runs: %+v", q)
	}
}
