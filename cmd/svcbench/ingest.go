package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ingestAnswer is the data of POST /api/v1/admin/import/:collection.
type ingestAnswer struct {
	Data struct {
		Created int64 `json:"created"`
		Failed  int64 `json:"failed"`
		Total   int64 `json:"total"`
	} `json:"data"`
}

// ingestBodies splits rows benchmark records into CSV import bodies of
// perRequest rows each (all in one when perRequest is 0). Row k is the
// record recordBody would send for seq k: title, n = k, done for odd k.
func ingestBodies(rows, perRequest int) [][]byte {
	if perRequest <= 0 || perRequest > rows {
		perRequest = max(rows, 1)
	}
	var out [][]byte
	for start := 0; start < rows; start += perRequest {
		b := make([]byte, 0, 32+perRequest*32)
		b = append(b, "title,n,done\n"...)
		for k := start; k < min(start+perRequest, rows); k++ {
			b = append(b, "ingest "...)
			b = strconv.AppendInt(b, int64(k), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(k), 10)
			b = append(b, ',')
			b = strconv.AppendBool(b, k%2 == 1)
			b = append(b, '\n')
		}
		out = append(out, b)
	}
	return out
}

// runIngest imports --rows records as CSV, --rows-per-request per request,
// up to --clients requests at a time, and reports rows/s: the records
// created over the wall time from the first request sent to the last
// answer. Each request's latency is recorded; a non-200 answer or a row
// the server reports failed counts as an error.
func runIngest(ctx context.Context, env scenarioEnv, cfg config, log io.Writer) (Result, error) {
	bodies := ingestBodies(cfg.rows, cfg.rowsPerRequest)
	clients := min(env.clients, len(bodies))
	fmt.Fprintf(log, "%s: %d rows in %d CSV import request(s), %d at a time, on %s\n", scIngest, cfg.rows, len(bodies), clients, env.nodes.bases[0])
	url := env.nodes.bases[0] + "/api/v1/admin/import/" + env.coll
	var (
		mu      sync.Mutex
		lat     []time.Duration
		created int64
		errs    int64
		samples = &errorSamples{max: 5}
	)
	before := env.api.nodeMetrics(ctx, env.nodes.bases)
	start := time.Now()
	err := forEach(ctx, len(bodies), clients, func(ctx context.Context, _, k int) error {
		t0 := time.Now()
		ans, err := env.api.importCSV(ctx, url, bodies[k])
		el := time.Since(t0)
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, el)
		if err != nil {
			errs++
			samples.add(err.Error())
			return nil
		}
		created += ans.Data.Created
		if ans.Data.Failed > 0 {
			errs++
			samples.add(fmt.Sprintf("request %d: %d of %d rows failed", k, ans.Data.Failed, ans.Data.Total))
		}
		return nil
	})
	elapsed := time.Since(start)
	if err != nil {
		return Result{}, err
	}
	after := env.api.nodeMetrics(ctx, env.nodes.bases)
	r := Result{
		Scenario: scIngest, Clients: clients, Nodes: 1, Elapsed: elapsed,
		Requests: int64(len(bodies)), Errors: errs, Latency: summarize(lat),
		Rows: created, ErrorSamples: samples.samples(),
	}
	if s := elapsed.Seconds(); s > 0 {
		r.RPS = float64(r.Requests) / s
		r.RowsPS = float64(created) / s
	}
	// Per-request CPU means little for requests of 100k rows: keep the
	// log figures only.
	r.Server = nodesDelta(before, after, r.Requests)
	r.Server.CPUPerReqMicros = nil
	return r, nil
}

// importCSV posts one CSV body to url as the admin.
func (c *apiClient) importCSV(ctx context.Context, url string, body []byte) (*ingestAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &apiError{Method: http.MethodPost, Path: req.URL.Path, Status: resp.StatusCode, Msg: errorMessage(raw)}
	}
	var out ingestAnswer
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decoding import answer: %w", err)
	}
	return &out, nil
}
