package jepsen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// regionRow is one line of the region benchmark's table: the latencies
// one client beside node saw.
type regionRow struct {
	leaderRegion string
	region       string
	node         string
	role         string
	model        time.Duration // what the round trips alone predict for a write
	writes       []time.Duration
	reads        []time.Duration
}

// measureRegion sends cfg.writes sequential creates through nd (after a
// few unmeasured ones, which may fail), then cfg.reads local reads on nd of the records
// just written, newest first, so the first read follows its write at once
// and checks that the node answers its own writes. Any failed request
// fails the test.
func measureRegion(t *testing.T, c *harness.Cluster, nd *harness.Node, region string, cfg regionsConfig) regionRow {
	t.Helper()
	ctx := context.Background()
	cl := c.Client(nd)
	row := regionRow{region: region, node: nd.Name}
	var ids []string
	for i := range regionsWarmup + cfg.writes {
		body := map[string]any{"seq": i + 1, "region": region}
		start := time.Now()
		resp, err := cl.Do(ctx, "POST", "/api/v1/regionbench", body)
		took := time.Since(start)
		if i < regionsWarmup && (err != nil || resp.Status != http.StatusCreated) {
			// Applying the delays resets the follower's pooled forwarding
			// connection: the first write that uses it fails (503).
			t.Logf("%s: warm-up create %d: %v %v", nd.Name, i, resp, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: create %d: %v", nd.Name, i, err)
		}
		if resp.Status != http.StatusCreated || resp.Index() == 0 {
			t.Fatalf("%s: create %d: %s (X-Svc-Index %d)", nd.Name, i, resp, resp.Index())
		}
		var created struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(resp.Body, &created); err != nil || created.Data.ID == "" {
			t.Fatalf("%s: create %d: no id in %s", nd.Name, i, resp)
		}
		ids = append(ids, created.Data.ID)
		if i >= regionsWarmup {
			row.writes = append(row.writes, took)
		}
	}
	for i := range cfg.reads {
		id := ids[len(ids)-1-i%len(ids)]
		start := time.Now()
		resp, err := cl.Do(ctx, "GET", "/api/v1/regionbench/"+id, nil)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: read %s: %v", nd.Name, id, err)
		}
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: read %s (written through this node): %s", nd.Name, id, resp)
		}
		row.reads = append(row.reads, took)
	}
	return row
}

// percentile is the nearest-rank p-th percentile (0 < p <= 1) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// writeRegionsHeader writes the table's header (Markdown).
func writeRegionsHeader(w io.Writer) {
	fmt.Fprintln(w, "| leader in | region (node) | role | model write | write min | write p50 | write p99 | writes | read p50 | reads |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
}

// writeRegionsRow writes one row of the table.
func writeRegionsRow(w io.Writer, r regionRow) {
	fmt.Fprintf(w, "| %s | %s (%s) | %s | %s | %s | %s | %s | %d | %s | %d |\n",
		r.leaderRegion, r.region, r.node, r.role, ms(r.model), ms(slices.Min(r.writes)),
		ms(percentile(r.writes, 0.50)), ms(percentile(r.writes, 0.99)), len(r.writes),
		ms(percentile(r.reads, 0.50)), len(r.reads))
}
