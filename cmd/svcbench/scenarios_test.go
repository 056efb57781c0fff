package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The scenarios against a real svcd node on loopback.

type benchRecord struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	N     float64 `json:"n"`
	Done  bool    `json:"done"`
}

// testEnv authenticates, creates the collection afresh with cfg.seedRows
// records and returns what the scenarios are built from.
func testEnv(t *testing.T, cfg config) scenarioEnv {
	t.Helper()
	ctx := context.Background()
	nodes, err := newTargets(cfg.nodeURLs(), cfg.spread)
	if err != nil {
		t.Fatal(err)
	}
	hc := newHTTPClient(cfg.clients, cfg.timeout)
	t.Cleanup(hc.CloseIdleConnections)
	a := newAPIClient(nodes.bases[0], hc, cfg.setupKey)
	if err := a.authenticate(ctx, cfg.email, cfg.password); err != nil {
		t.Fatal(err)
	}
	if err := a.ensureCollection(ctx, cfg.collection, true); err != nil {
		t.Fatal(err)
	}
	ids, err := prepareRows(ctx, a, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return scenarioEnv{api: a, nodes: nodes, coll: cfg.collection, ids: ids, clients: cfg.clients,
		seedRows: cfg.seedRows, skipTotal: cfg.skipTotal, log: io.Discard}
}

// readRecord returns a record and its ETag.
func readRecord(t *testing.T, env scenarioEnv, id string) (benchRecord, string) {
	t.Helper()
	req, err := getRequest(context.Background(), env.api.base, env.coll, id)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := env.api.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Data benchRecord }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("GET record %s: HTTP %d", id, resp.StatusCode)
	}
	return out.Data, resp.Header.Get("ETag")
}

// TestFilterScenario: every request is a filtered list of the seeded rows,
// and what it answers is the rows the filter admits.
func TestFilterScenario(t *testing.T) {
	srv, hits := serveNode(t, realNode(t), isFilterList)
	cfg := testConfig(srv.URL, scFilter)
	cfg.seedRows = 200
	res, out, log := runBench(t, cfg)
	r := res[0]
	checkElapsed(t, r, cfg.duration)
	if r.Requests < 10 || r.Errors != 0 || r.Precond != 0 {
		t.Fatalf("requests=%d errors=%d 412s=%d\n%s%s", r.Requests, r.Errors, r.Precond, out, log)
	}
	if got := hits.Load(); got != r.Requests {
		t.Errorf("reported %d filtered lists, the server got %d", r.Requests, got)
	}

	// One request as the scenario sends it. A filter the server could not
	// parse would be dropped and answer every row.
	env := scenarioEnv{nodes: targets{bases: []string{srv.URL}}, coll: cfg.collection, seedRows: cfg.seedRows, clients: 1}
	ld, err := newLoad(context.Background(), scFilter, env)
	if err != nil {
		t.Fatal(err)
	}
	req, err := ld.next(context.Background(), &worker{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Data       []benchRecord
		TotalItems int
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d, %v", resp.StatusCode, err)
	}
	// n runs over 0..199 and done holds for odd n: n >= 100 && done admits 50.
	if page.TotalItems != 50 || len(page.Data) != 30 {
		t.Errorf("totalItems=%d, %d rows; want 50 and a page of 30", page.TotalItems, len(page.Data))
	}
	for _, rec := range page.Data {
		if rec.N < 100 || !rec.Done {
			t.Errorf("row %+v does not match %q", rec, listFilter(cfg.seedRows))
		}
	}
}

// TestCASScenario: conditional updates change the records, every client
// ends with each record's current ETag, and a stale ETag costs exactly one
// 412, counted apart from errors.
func TestCASScenario(t *testing.T) {
	srv, _ := serveNode(t, realNode(t), nil)
	cfg := testConfig(srv.URL, scCAS)
	cfg.seedRows = 40 // 10 records for each of the 4 clients
	env := testEnv(t, cfg)
	ctx := context.Background()
	c, err := newCASLoad(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, cc := range c.clients {
		owned += len(cc.ids)
		if len(cc.ids) != 10 {
			t.Errorf("a client owns %d records, want 10", len(cc.ids))
		}
	}
	if owned != cfg.seedRows {
		t.Fatalf("%d records dealt out of %d", owned, cfg.seedRows)
	}

	// Someone else updates three records: their ETags go stale.
	stale := []string{c.clients[0].ids[0], c.clients[1].ids[3], c.clients[1].ids[9]}
	for _, id := range stale {
		req, _ := patchRequest(ctx, env.api.base, env.coll, id, []byte(`{"title":"changed"}`), "")
		resp, err := env.api.hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("PATCH %s: %v %v", id, resp, err)
		}
		resp.Body.Close()
	}

	// The scenario runs in rounds of cfg.duration until the clients have
	// sent two updates per record: how many fit in one round depends on
	// the machine and its load (the race detector alone cuts it fivefold).
	// The clients keep their ETags from one round to the next.
	var r Result
	for round := 0; r.Requests < int64(2*owned); round++ {
		if round == 20 {
			t.Fatalf("only %d requests in %d rounds: not every record was updated twice", r.Requests, round)
		}
		rr := runScenario(ctx, env, scCAS, c.load(), 0, cfg.duration)
		checkElapsed(t, rr, cfg.duration)
		if round == 0 {
			r = rr
			continue
		}
		r.Requests += rr.Requests
		r.Errors += rr.Errors
		r.Precond += rr.Precond
		r.ErrorSamples = append(r.ErrorSamples, rr.ErrorSamples...)
	}
	if r.Errors != 0 || r.ErrorSamples != nil {
		t.Errorf("errors=%d: %v", r.Errors, r.ErrorSamples)
	}
	if r.Precond != int64(len(stale)) {
		t.Errorf("412s=%d, want %d (one per stale ETag)", r.Precond, len(stale))
	}
	if !strings.Contains(formatLine(r), "  412s=3") {
		t.Errorf("412s missing from %q", formatLine(r))
	}
	for w, cc := range c.clients {
		for i, id := range cc.ids {
			rec, tag := readRecord(t, env, id)
			if !strings.HasPrefix(rec.Title, "cas ") {
				t.Errorf("record %s of client %d has title %q: never updated", id, w, rec.Title)
			}
			if tag != cc.etags[i] {
				t.Errorf("record %s: client %d holds ETag %s, current is %s", id, w, cc.etags[i], tag)
			}
		}
	}
}

// TestUpdateScenario: plain updates succeed and change records.
func TestUpdateScenario(t *testing.T) {
	srv, _ := serveNode(t, realNode(t), nil)
	cfg := testConfig(srv.URL, scUpdate)
	env := testEnv(t, cfg)
	ld, err := newLoad(context.Background(), scUpdate, env)
	if err != nil {
		t.Fatal(err)
	}
	r := runScenario(context.Background(), env, scUpdate, ld, 0, cfg.duration)
	checkElapsed(t, r, cfg.duration)
	if r.Requests < 10 || r.Errors != 0 || r.Precond != 0 {
		t.Fatalf("requests=%d errors=%d 412s=%d: %v", r.Requests, r.Errors, r.Precond, r.ErrorSamples)
	}
	if strings.Contains(formatLine(r), "412s=") {
		t.Errorf("412s printed for plain updates: %q", formatLine(r))
	}
	updated := 0
	for _, id := range env.ids {
		if rec, _ := readRecord(t, env, id); strings.HasPrefix(rec.Title, "upd ") {
			updated++
		}
	}
	if updated == 0 || updated > int(r.Requests) {
		t.Errorf("%d records carry an update title after %d updates", updated, r.Requests)
	}
}

// TestSpreadOverNodes: with --urls and --spread every client alternates
// between the nodes; without --spread the clients are dealt out to them.
func TestSpreadOverNodes(t *testing.T) {
	h := realNode(t)
	a, hitsA := serveNode(t, h, isFilterList)
	b, hitsB := serveNode(t, h, isFilterList)
	for _, spread := range []bool{true, false} {
		hitsA.Store(0)
		hitsB.Store(0)
		cfg := testConfig("", scFilter)
		cfg.urls, cfg.spread, cfg.clients, cfg.seedRows = []string{a.URL, b.URL}, spread, 3, 100
		res, out, _ := runBench(t, cfg)
		r := res[0]
		na, nb := hitsA.Load(), hitsB.Load()
		if r.Errors != 0 || na+nb != r.Requests || na == 0 || nb == 0 {
			t.Errorf("spread=%v: %d requests, %d errors; nodes got %d and %d", spread, r.Requests, r.Errors, na, nb)
		}
		if spread && (na-nb > 3 || nb-na > 3) {
			t.Errorf("spread: nodes got %d and %d requests, want within one per client", na, nb)
		}
		mode := map[bool]string{true: "nodes=2 spread", false: "nodes=2 pinned"}[spread]
		if r.Nodes != 2 || r.Spread != spread || !strings.Contains(out, mode) {
			t.Errorf("spread=%v: result %d nodes, spread %v; output %q", spread, r.Nodes, r.Spread, out)
		}
	}
}

func TestTargetsPick(t *testing.T) {
	nodes := targets{bases: []string{"a", "b", "c"}}
	w1, w2 := &worker{id: 1}, &worker{id: 2}
	var got []string
	for range 3 {
		got = append(got, nodes.bases[nodes.pick(w1)], nodes.bases[nodes.pick(w2)])
	}
	if strings.Join(got, "") != "bcbcbc" {
		t.Errorf("pinned picks %v, want client 1 on b and client 2 on c", got)
	}
	nodes.spread = true
	got = nil
	for range 3 {
		got = append(got, nodes.bases[nodes.pick(w1)], nodes.bases[nodes.pick(w2)])
	}
	if strings.Join(got, "") != "bccaab" {
		t.Errorf("spread picks %v, want each client to go round from its own node", got)
	}
	if _, err := newTargets([]string{"http://x:1/", " https://y "}, false); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]string{nil, {""}, {"x:1"}, {"http://"}, {"http://a:1", "ftp://b"}} {
		if _, err := newTargets(bad, false); err == nil {
			t.Errorf("newTargets(%q) accepted", bad)
		}
	}
}
