package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestBulkScenarios: batch writes --batch-size records per request and
// reports them as rows; ingest imports exactly --rows records as CSV in
// requests of --rows-per-request. The collection's count proves both.
func TestBulkScenarios(t *testing.T) {
	srv, batches := serveNode(t, realNode(t), func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Path == "/api/v1/batch"
	})
	cfg := testConfig(srv.URL, scBatch+","+scIngest)
	cfg.batchSize = 10
	cfg.rows = 2500
	cfg.rowsPerRequest = 1000
	res, out, log := runBench(t, cfg)
	if len(res) != 2 {
		t.Fatalf("%d results\n%s%s", len(res), out, log)
	}
	b, in := res[0], res[1]
	checkElapsed(t, b, cfg.duration)
	if b.Requests < 5 || b.Errors != 0 || b.Rows != b.Requests*10 || batches.Load() != b.Requests {
		t.Fatalf("batch: requests=%d (server saw %d) errors=%d rows=%d: %v", b.Requests, batches.Load(), b.Errors, b.Rows, b.ErrorSamples)
	}
	if want := float64(b.Rows) / b.Elapsed.Seconds(); b.RowsPS < want*0.999 || b.RowsPS > want*1.001 {
		t.Errorf("batch rows/s %.1f, want %.1f", b.RowsPS, want)
	}
	if in.Scenario != scIngest || in.Requests != 3 || in.Errors != 0 || in.Rows != 2500 || in.Latency.Count != 3 || in.RowsPS <= 0 {
		t.Fatalf("ingest: %+v", in)
	}
	for _, r := range res {
		if line := formatLine(r); !strings.Contains(line, "rows/s=") {
			t.Errorf("no rows/s in %q", line)
		}
	}

	// Everything reported was written, nothing more.
	a := newAPIClient(srv.URL, newHTTPClient(1, cfg.timeout), cfg.setupKey)
	if err := a.authenticate(context.Background(), cfg.email, cfg.password); err != nil {
		t.Fatal(err)
	}
	n, err := a.count(context.Background(), cfg.collection)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(b.Rows + in.Rows); n != want {
		t.Errorf("collection holds %d records, the scenarios reported %d", n, want)
	}
}

// TestIngestBodies: the CSV bodies carry every row once, header first.
func TestIngestBodies(t *testing.T) {
	bodies := ingestBodies(2500, 1000)
	if len(bodies) != 3 {
		t.Fatalf("%d bodies", len(bodies))
	}
	rows := 0
	for _, b := range bodies {
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if lines[0] != "title,n,done" {
			t.Errorf("header %q", lines[0])
		}
		rows += len(lines) - 1
	}
	if rows != 2500 || !strings.HasSuffix(string(bodies[2]), "ingest 2499,2499,true\n") {
		t.Errorf("%d rows; last body ends %q", rows, bodies[2][len(bodies[2])-30:])
	}
	if one := ingestBodies(10, 0); len(one) != 1 {
		t.Errorf("rows-per-request 0 gave %d bodies", len(one))
	}
}
