package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testEmail    = "bench@example.com"
	testPassword = "bench-password-0123456789"
	testToken    = "admin-token"
	testSetupKey = "setup-key"

	getBaseDelay  = time.Millisecond      // every get sleeps this long
	getSlowDelay  = 15 * time.Millisecond // every getSlowEvery-th get sleeps this
	getSlowEvery  = 25                    // 4% of gets are slow
	getErrorEvery = 10                    // every 10th get answers 500
	cpuPerRequest = 100 * time.Microsecond
	cmdsPerBatch  = 4
)

// fakeServer implements just enough of the svcd HTTP API for svcbench.
type fakeServer struct {
	t         *testing.T
	noMetrics bool // answer 404 on /api/v1/_/metrics, like an older server

	mu          sync.Mutex
	adminExists bool
	colls       map[string][]string            // collection → ids in creation order
	records     map[string]map[string]struct{} // collection → id set
	nextID      int

	creates, gets, lists  atomic.Int64
	getErrors, notFound   atomic.Int64
	badRequests, authFail atomic.Int64
	skipTotalLists        atomic.Int64
	cpuMicros             atomic.Int64
	fsmCommands           atomic.Int64
	fsmBatches            atomic.Int64
}

func newFakeServer(t *testing.T, noMetrics bool) (*fakeServer, *httptest.Server) {
	f := &fakeServer{
		t:         t,
		noMetrics: noMetrics,
		colls:     map[string][]string{},
		records:   map[string]map[string]struct{}{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/admin/setup", f.setup)
	mux.HandleFunc("POST /api/v1/admin/auth/login", f.login)
	mux.HandleFunc("POST /api/v1/admin/collections", f.createCollection)
	mux.HandleFunc("DELETE /api/v1/admin/collections/{name}", f.deleteCollection)
	mux.HandleFunc("GET /api/v1/_/metrics", f.metrics)
	mux.HandleFunc("POST /api/v1/{coll}", f.createRecord)
	mux.HandleFunc("GET /api/v1/{coll}/{id}", f.getRecord)
	mux.HandleFunc("GET /api/v1/{coll}", f.listRecords)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg, "code": status})
}

func (f *fakeServer) admin(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		f.authFail.Add(1)
		writeErr(w, http.StatusUnauthorized, "admin token required")
		return false
	}
	return true
}

func (f *fakeServer) creds(w http.ResponseWriter, r *http.Request) bool {
	var c struct{ Email, Password string }
	if json.NewDecoder(r.Body).Decode(&c) != nil || c.Email != testEmail || c.Password != testPassword {
		writeErr(w, http.StatusUnauthorized, "bad credentials")
		return false
	}
	return true
}

func (f *fakeServer) setup(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Setup-Key") != testSetupKey {
		writeErr(w, http.StatusForbidden, "bad setup key")
		return
	}
	f.mu.Lock()
	exists := f.adminExists
	f.adminExists = true
	f.mu.Unlock()
	if exists {
		writeErr(w, http.StatusConflict, "admin already exists")
		return
	}
	if !f.creds(w, r) {
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"data": map[string]any{"token": testToken, "admin": map[string]any{"email": testEmail}}})
}

func (f *fakeServer) login(w http.ResponseWriter, r *http.Request) {
	if !f.creds(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"token": testToken, "admin": map[string]any{"email": testEmail}}})
}

func (f *fakeServer) createCollection(w http.ResponseWriter, r *http.Request) {
	if !f.admin(w, r) {
		return
	}
	var c struct {
		Name   string
		Type   string
		Fields []struct{ Name, Type string }
	}
	if json.NewDecoder(r.Body).Decode(&c) != nil || c.Name == "" || c.Type != "base" || len(c.Fields) != 3 {
		writeErr(w, http.StatusBadRequest, "bad collection")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.colls[c.Name]; ok {
		writeErr(w, http.StatusBadRequest, "collection exists")
		return
	}
	f.colls[c.Name] = nil
	f.records[c.Name] = map[string]struct{}{}
	writeJSON(w, http.StatusCreated, map[string]any{"data": map[string]any{"name": c.Name}})
}

func (f *fakeServer) deleteCollection(w http.ResponseWriter, r *http.Request) {
	if !f.admin(w, r) {
		return
	}
	name := r.PathValue("name")
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.colls[name]; !ok {
		writeErr(w, http.StatusNotFound, "no such collection")
		return
	}
	delete(f.colls, name)
	delete(f.records, name)
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeServer) metrics(w http.ResponseWriter, r *http.Request) {
	if f.noMetrics {
		http.NotFound(w, r)
		return
	}
	if !f.admin(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{
		"pid":                    4242,
		"process_cpu_seconds":    float64(f.cpuMicros.Load()) / 1e6,
		"fsm_batches_total":      f.fsmBatches.Load(),
		"fsm_commands_total":     f.fsmCommands.Load(),
		"fsm_batch_commands_p50": cmdsPerBatch,
		"fsm_batch_commands_p99": cmdsPerBatch,
	}})
}

// addRecord stores a record and returns its id ("" if no collection).
func (f *fakeServer) addRecord(coll string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	set, ok := f.records[coll]
	if !ok {
		return ""
	}
	f.nextID++
	id := "r" + strconv.Itoa(f.nextID)
	set[id] = struct{}{}
	f.colls[coll] = append(f.colls[coll], id)
	return id
}

func (f *fakeServer) createRecord(w http.ResponseWriter, r *http.Request) {
	f.cpuMicros.Add(int64(cpuPerRequest / time.Microsecond))
	var rec map[string]any
	if err := json.NewDecoder(r.Body).Decode(&rec); err != nil {
		f.badRequests.Add(1)
		writeErr(w, http.StatusBadRequest, "bad json")
		return
	}
	_, okT := rec["title"].(string)
	_, okN := rec["n"].(float64)
	_, okD := rec["done"].(bool)
	if !okT || !okN || !okD || len(rec) != 3 {
		f.badRequests.Add(1)
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("bad record %v", rec))
		return
	}
	id := f.addRecord(r.PathValue("coll"))
	if id == "" {
		writeErr(w, http.StatusNotFound, "no such collection")
		return
	}
	f.creates.Add(1)
	if f.fsmCommands.Add(1)%cmdsPerBatch == 0 {
		f.fsmBatches.Add(1)
	}
	rec["id"] = id
	writeJSON(w, http.StatusCreated, map[string]any{"data": rec})
}

func (f *fakeServer) getRecord(w http.ResponseWriter, r *http.Request) {
	f.cpuMicros.Add(int64(cpuPerRequest / time.Microsecond))
	n := f.gets.Add(1)
	delay := getBaseDelay
	if n%getSlowEvery == 0 {
		delay = getSlowDelay
	}
	time.Sleep(delay)
	if n%getErrorEvery == 0 {
		f.getErrors.Add(1)
		writeErr(w, http.StatusInternalServerError, "boom "+strconv.FormatInt(n, 10))
		return
	}
	coll, id := r.PathValue("coll"), r.PathValue("id")
	f.mu.Lock()
	_, ok := f.records[coll][id]
	f.mu.Unlock()
	if !ok {
		f.notFound.Add(1)
		writeErr(w, http.StatusNotFound, "no such record")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": id, "title": "t", "n": 1, "done": false}})
}

func (f *fakeServer) listRecords(w http.ResponseWriter, r *http.Request) {
	f.cpuMicros.Add(int64(cpuPerRequest / time.Microsecond))
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	perPage, _ := strconv.Atoi(q.Get("perPage"))
	if perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 200) // like a real server, cap the page size
	skipTotal := q.Get("skipTotal") == "1"
	coll := r.PathValue("coll")
	f.mu.Lock()
	ids, ok := f.colls[coll]
	ids = ids[:len(ids):len(ids)]
	f.mu.Unlock()
	if !ok {
		writeErr(w, http.StatusNotFound, "no such collection")
		return
	}
	data := []map[string]any{}
	for i := (page - 1) * perPage; i < len(ids) && i < page*perPage; i++ {
		data = append(data, map[string]any{"id": ids[i], "title": "t", "n": i, "done": false})
	}
	resp := map[string]any{"data": data, "page": page, "perPage": perPage, "totalItems": -1, "totalPages": -1}
	if !skipTotal {
		resp["totalItems"] = len(ids)
		resp["totalPages"] = (len(ids) + perPage - 1) / perPage
	}
	if perPage == 30 {
		// Count only the list scenario's requests, not id collection.
		f.lists.Add(1)
		if skipTotal {
			f.skipTotalLists.Add(1)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func testConfig(url, scenario string) config {
	return config{
		url:        url,
		email:      testEmail,
		password:   testPassword,
		setupKey:   testSetupKey,
		scenario:   scenario,
		clients:    4,
		duration:   300 * time.Millisecond,
		seedRows:   50,
		collection: "bench_test",
		fresh:      true,
		timeout:    5 * time.Second,
	}
}

func runBench(t *testing.T, cfg config) ([]Result, string, string) {
	t.Helper()
	var out, log bytes.Buffer
	res, err := bench(context.Background(), cfg, &out, &log)
	if err != nil {
		t.Fatalf("bench: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), log.String())
	}
	return res, out.String(), log.String()
}

func checkElapsed(t *testing.T, r Result, d time.Duration) {
	t.Helper()
	if r.Elapsed < d || r.Elapsed > d+time.Second {
		t.Errorf("%s: elapsed %v, want about %v", r.Scenario, r.Elapsed, d)
	}
	if r.Latency.Count != int(r.Requests) {
		t.Errorf("%s: %d latencies recorded for %d requests", r.Scenario, r.Latency.Count, r.Requests)
	}
	if want := float64(r.Requests) / r.Elapsed.Seconds(); r.RPS < want*0.999 || r.RPS > want*1.001 {
		t.Errorf("%s: rps %.1f, want %.1f", r.Scenario, r.RPS, want)
	}
}

// TestGetScenario checks request and error counting, the latency
// distribution and the server figures against what the server observed.
func TestGetScenario(t *testing.T) {
	f, srv := newFakeServer(t, false)
	cfg := testConfig(srv.URL, scGet)
	cfg.json = true
	res, out, log := runBench(t, cfg)

	if len(res) != 1 {
		t.Fatalf("got %d results, want 1", len(res))
	}
	r := res[0]
	checkElapsed(t, r, cfg.duration)
	if got := f.creates.Load(); got != int64(cfg.seedRows) {
		t.Errorf("seeding created %d records, want %d", got, cfg.seedRows)
	}
	if r.Requests < 100 {
		t.Fatalf("only %d requests in %v", r.Requests, cfg.duration)
	}
	// No warmup: every get the server saw belongs to the measured phase.
	if got := f.gets.Load(); r.Requests != got {
		t.Errorf("reported %d requests, server saw %d gets", r.Requests, got)
	}
	if got := f.getErrors.Load(); r.Errors != got || got == 0 {
		t.Errorf("reported %d errors, server returned %d errors", r.Errors, got)
	}
	if n := f.notFound.Load(); n != 0 {
		t.Errorf("%d gets of ids that do not exist", n)
	}
	// 96% of gets take >= 1ms, 4% >= 15ms.
	l := r.Latency
	if l.Min < getBaseDelay || l.P50 < getBaseDelay || l.P50 >= getSlowDelay {
		t.Errorf("min/p50 = %v/%v, want within [%v, %v)", l.Min, l.P50, getBaseDelay, getSlowDelay)
	}
	if l.P99 < getSlowDelay || l.Max < getSlowDelay {
		t.Errorf("p99/max = %v/%v, want >= %v", l.P99, l.Max, getSlowDelay)
	}
	if !(l.P50 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.Max) {
		t.Errorf("percentiles not ordered: %+v", l)
	}
	// Server CPU is exactly 100µs per request; gets go through no FSM batch.
	if c := r.Server.CPUPerReqMicros; c == nil || *c < 99.9 || *c > 100.1 {
		t.Errorf("cpu/req = %v, want 100µs", c)
	}
	if r.Server.CmdsPerTxn != nil {
		t.Errorf("cmds/txn = %v for a read-only scenario", *r.Server.CmdsPerTxn)
	}

	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "get     clients=4  ") || !strings.Contains(lines[0], "cpu/req=100µs") {
		t.Errorf("unexpected output:\n%s", out)
	}
	var j jsonResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &j); err != nil || j.Requests != r.Requests || j.Errors != r.Errors {
		t.Errorf("JSON line %q (%v) does not match result", lines[len(lines)-1], err)
	}
	if !strings.Contains(log, "HTTP 500: boom") {
		t.Errorf("error bodies not sampled in log:\n%s", log)
	}
	if n := f.authFail.Load(); n != 0 {
		t.Errorf("%d admin calls without a valid token", n)
	}
}

// TestCreateScenarioWarmup checks that warmup requests are not counted and
// that FSM figures come out of the metrics deltas.
func TestCreateScenarioWarmup(t *testing.T) {
	f, srv := newFakeServer(t, false)
	cfg := testConfig(srv.URL, scCreate)
	cfg.warmup = 200 * time.Millisecond
	res, out, _ := runBench(t, cfg)
	r := res[0]
	checkElapsed(t, r, cfg.duration)
	total := f.creates.Load()
	if r.Requests == 0 || r.Requests >= total {
		t.Errorf("reported %d creates of %d total: warmup must be excluded", r.Requests, total)
	}
	if r.Errors != 0 || f.badRequests.Load() != 0 {
		t.Errorf("errors=%d, bad request bodies=%d", r.Errors, f.badRequests.Load())
	}
	if c := r.Server.CPUPerReqMicros; c == nil || *c < 99.9 || *c > 100.1 {
		t.Errorf("cpu/req = %v, want 100µs", c)
	}
	if c := r.Server.CmdsPerTxn; c == nil || *c < 3.5 || *c > 4.5 {
		t.Errorf("cmds/txn = %v, want about %d", c, cmdsPerBatch)
	}
	if !strings.Contains(out, "cmds/txn=") || !strings.Contains(out, "(p50 4)") {
		t.Errorf("missing FSM figures in %q", out)
	}
}

// TestListScenarioOldServer runs against a server with an existing admin and
// no metrics endpoint, with --skip-total.
func TestListScenarioOldServer(t *testing.T) {
	f, srv := newFakeServer(t, true)
	f.adminExists = true // setup answers 409: svcbench must log in
	cfg := testConfig(srv.URL, scList)
	cfg.skipTotal = true
	res, out, log := runBench(t, cfg)
	r := res[0]
	checkElapsed(t, r, cfg.duration)
	if got := f.lists.Load(); r.Requests != got || got == 0 {
		t.Errorf("reported %d lists, server saw %d", r.Requests, got)
	}
	if f.skipTotalLists.Load() != f.lists.Load() {
		t.Errorf("skipTotal=1 sent on %d of %d list requests", f.skipTotalLists.Load(), f.lists.Load())
	}
	if r.Server != (ServerFigures{}) {
		t.Errorf("server figures without a metrics endpoint: %+v", r.Server)
	}
	if strings.Contains(out, "cpu/req") || strings.Contains(out, "cmds/txn") {
		t.Errorf("server figures printed without metrics: %q", out)
	}
	if !strings.Contains(log, "metrics unavailable") {
		t.Errorf("missing metrics note in log:\n%s", log)
	}
}

// TestMixedScenarioExistingRows reuses a populated collection (no --fresh):
// ids come from paging through it, and every request is accounted for.
func TestMixedScenarioExistingRows(t *testing.T) {
	f, srv := newFakeServer(t, false)
	f.colls["bench_test"] = nil
	f.records["bench_test"] = map[string]struct{}{}
	for range 450 {
		f.addRecord("bench_test")
	}
	cfg := testConfig(srv.URL, scMixed)
	cfg.fresh = false
	res, _, _ := runBench(t, cfg)
	r := res[0]
	checkElapsed(t, r, cfg.duration)
	creates, gets, lists := f.creates.Load(), f.gets.Load(), f.lists.Load()
	if creates == 0 || gets == 0 || lists == 0 {
		t.Errorf("mix: creates=%d gets=%d lists=%d, want all > 0", creates, gets, lists)
	}
	if sum := creates + gets + lists; r.Requests != sum {
		t.Errorf("reported %d requests, server saw %d", r.Requests, sum)
	}
	if r.Errors != f.getErrors.Load() {
		t.Errorf("reported %d errors, server returned %d", r.Errors, f.getErrors.Load())
	}
	if n := f.notFound.Load(); n != 0 {
		t.Errorf("%d gets of ids that do not exist", n)
	}
}

func TestPrepareRowsPaging(t *testing.T) {
	f, srv := newFakeServer(t, false)
	f.colls["c"] = nil
	f.records["c"] = map[string]struct{}{}
	for range 450 {
		f.addRecord("c")
	}
	cfg := testConfig(srv.URL, scGet)
	cfg.collection, cfg.seedRows = "c", 500
	api := newAPIClient(srv.URL, newHTTPClient(cfg.clients, cfg.timeout), "")
	ids, err := prepareRows(context.Background(), api, cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if f.creates.Load() != 50 {
		t.Errorf("created %d records, want 50 to reach 500", f.creates.Load())
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("duplicate id %s", id)
		}
		seen[id] = true
		if _, ok := f.records["c"][id]; !ok {
			t.Errorf("unknown id %s", id)
		}
	}
	if len(ids) != 500 {
		t.Errorf("got %d ids, want 500", len(ids))
	}
}

func TestAllRunsInOrder(t *testing.T) {
	_, srv := newFakeServer(t, false)
	cfg := testConfig(srv.URL, scAll)
	cfg.duration = 100 * time.Millisecond
	res, out, _ := runBench(t, cfg)
	var names []string
	for _, r := range res {
		names = append(names, r.Scenario)
	}
	if strings.Join(names, ",") != "create,get,list" {
		t.Errorf("scenarios %v, want create,get,list", names)
	}
	if strings.Count(out, "\n") != 3 {
		t.Errorf("want 3 lines, got:\n%s", out)
	}
}

func TestParseFlags(t *testing.T) {
	t.Setenv("SVC_SETUP_KEY", "k1")
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.url != "http://127.0.0.1:8090" || c.scenario != scAll || c.clients != 16 ||
		c.duration != 10*time.Second || c.warmup != 2*time.Second || c.seedRows != 10000 ||
		c.collection != "bench_items" || c.email != "bench@example.com" || len(c.password) < 16 ||
		c.fresh || c.json || c.skipTotal || c.setupKey != "k1" {
		t.Errorf("defaults: %+v", c)
	}
	c, err = parseFlags([]string{"--scenario", "mixed", "--clients=64", "--duration", "1m", "--fresh", "--json", "--skip-total"}, &bytes.Buffer{})
	if err != nil || c.scenario != scMixed || c.clients != 64 || c.duration != time.Minute || !c.fresh || !c.json || !c.skipTotal {
		t.Errorf("parsed %+v, %v", c, err)
	}
	c, err = parseFlags([]string{"--urls", "http://a:1, http://b:2/", "--spread", "--scenario", "filter,cas,all"}, &bytes.Buffer{})
	if err != nil || !c.spread || len(c.nodeURLs()) != 2 ||
		strings.Join(scenarios(c.scenario), ",") != "filter,cas,create,get,list" {
		t.Errorf("parsed %+v (scenarios %v), %v", c, scenarios(c.scenario), err)
	}
	if c, _ := parseFlags([]string{"--url", "http://x:3"}, &bytes.Buffer{}); strings.Join(c.nodeURLs(), ",") != "http://x:3" {
		t.Errorf("--url alone: nodes %v", c.nodeURLs())
	}
	for _, bad := range [][]string{{"--scenario", "nope"}, {"--scenario", "get,"}, {"--clients", "0"}, {"--duration", "0s"}, {"extra"},
		{"--url", "http://a:1", "--urls", "http://b:2"}, {"--urls", "http://a:1,"}, {"--url", "localhost:8090"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%v) accepted", bad)
		}
	}
}
