// Command svcbench is an HTTP load generator for svcd. It speaks only the
// public HTTP API, so it can drive any node of a cluster (or an older build).
//
// It authenticates as admin (POST /api/v1/admin/setup, falling back to
// /api/v1/admin/auth/login when an admin exists; X-Setup-Key is sent from
// $SVC_SETUP_KEY when set), makes sure the benchmark collection exists, then
// runs each scenario with a pool of concurrent clients sharing one
// keep-alive http.Client:
//
//	create  POST /api/v1/:collection
//	get     GET  /api/v1/:collection/:id (random ids of existing records)
//	list    GET  /api/v1/:collection?perPage=30[&skipTotal=1]
//	mixed   20% create, 60% get, 20% list
//	all     create, then get, then list (the default)
//
// Before get, list and mixed the collection is topped up to --seed-rows
// records. Every scenario runs a --warmup phase that is not measured, then
// a --duration phase in which every latency is recorded. Non-2xx answers
// count as errors and the first few are printed to stderr. One line per
// scenario goes to stdout:
//
//	create  clients=16  dur=10.0s  reqs=93012  rps=9301  p50=1.52ms p95=3.1ms p99=4.9ms max=22ms  errors=0  cpu/req=96µs  cmds/txn=12.4 (p50 11)
//
// cpu/req and cmds/txn come from GET /api/v1/_/metrics (snapshots before
// and after the measured phase) and are omitted when the server lacks that
// endpoint. cpu/req is the server's process CPU time per request; cmds/txn
// is FSM commands per SQLite transaction, with the server-reported p50.
//
// Usage:
//
//	svcbench [--url http://127.0.0.1:8090] [--scenario all|create|get|list|mixed]
//	         [--clients 16] [--duration 10s] [--warmup 2s] [--seed-rows 10000]
//	         [--collection bench_items] [--fresh] [--skip-total] [--json]
//	         [--email bench@example.com] [--password ...] [--timeout 30s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// config holds the command-line settings.
type config struct {
	url        string
	email      string
	password   string
	setupKey   string
	scenario   string
	clients    int
	duration   time.Duration
	warmup     time.Duration
	seedRows   int
	collection string
	fresh      bool
	skipTotal  bool
	json       bool
	timeout    time.Duration
}

// maxGetIDs bounds how many existing record ids are listed for get requests.
const maxGetIDs = 100000

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("svcbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8090", "server base URL")
	fs.StringVar(&c.email, "email", "bench@example.com", "admin email (created on first run)")
	fs.StringVar(&c.password, "password", "bench-password-0123456789", "admin password (16+ chars)")
	fs.StringVar(&c.scenario, "scenario", scAll, "create, get, list, mixed or all (create, get, list in sequence)")
	fs.IntVar(&c.clients, "clients", 16, "concurrent clients")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured duration per scenario")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warmup per scenario")
	fs.IntVar(&c.seedRows, "seed-rows", 10000, "records the collection must hold before get/list/mixed")
	fs.StringVar(&c.collection, "collection", "bench_items", "collection to use")
	fs.BoolVar(&c.fresh, "fresh", false, "drop and recreate the collection first")
	fs.BoolVar(&c.skipTotal, "skip-total", false, "add skipTotal=1 to list requests")
	fs.BoolVar(&c.json, "json", false, "also print each result as a JSON line")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svcbench [flags]   (HTTP load generator for svcd; $SVC_SETUP_KEY is sent as X-Setup-Key)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	switch {
	case len(scenarios(c.scenario)) == 0:
		return c, fmt.Errorf("--scenario: unknown %q (want create, get, list, mixed or all)", c.scenario)
	case c.clients < 1:
		return c, errors.New("--clients must be >= 1")
	case c.duration <= 0:
		return c, errors.New("--duration must be > 0")
	case c.warmup < 0:
		return c, errors.New("--warmup must be >= 0")
	case c.seedRows < 0:
		return c, errors.New("--seed-rows must be >= 0")
	case c.collection == "":
		return c, errors.New("--collection must not be empty")
	case c.timeout <= 0:
		return c, errors.New("--timeout must be > 0")
	}
	c.setupKey = os.Getenv("SVC_SETUP_KEY")
	return c, nil
}

// scenarios expands a --scenario value; nil when it is unknown.
func scenarios(name string) []string {
	switch name {
	case scAll:
		return []string{scCreate, scGet, scList}
	case scCreate, scGet, scList, scMixed:
		return []string{name}
	}
	return nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "svcbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := bench(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "svcbench:", err)
		stop()
		os.Exit(1)
	}
}

// bench prepares the server and runs the configured scenarios, printing
// each result to out as it completes; progress and errors go to log.
func bench(ctx context.Context, cfg config, out, log io.Writer) ([]Result, error) {
	hc := newHTTPClient(cfg.clients, cfg.timeout)
	defer hc.CloseIdleConnections()
	api := newAPIClient(cfg.url, hc, cfg.setupKey)

	if err := api.authenticate(ctx, cfg.email, cfg.password); err != nil {
		return nil, err
	}
	if err := api.ensureCollection(ctx, cfg.collection, cfg.fresh); err != nil {
		return nil, err
	}
	if api.metrics(ctx) == nil {
		fmt.Fprintln(log, "note: GET /api/v1/_/metrics unavailable; server CPU and FSM figures omitted")
	}

	var (
		results  []Result
		ids      []string
		prepared bool
	)
	for _, sc := range scenarios(cfg.scenario) {
		if sc != scCreate && !prepared {
			var err error
			if ids, err = prepareRows(ctx, api, cfg, log); err != nil {
				return results, err
			}
			prepared = true
		}
		mk, err := scenarioRequests(sc, api, cfg.collection, ids, cfg.skipTotal)
		if err != nil {
			return results, err
		}
		fmt.Fprintf(log, "%s: %d clients, warmup %s, measuring %s\n", sc, cfg.clients, cfg.warmup, cfg.duration)
		r := runScenario(ctx, api, sc, mk, cfg.clients, cfg.warmup, cfg.duration)
		if err := ctx.Err(); err != nil {
			return results, fmt.Errorf("%s interrupted: %w", sc, err)
		}
		results = append(results, r)
		if err := writeResult(out, log, r, cfg.json); err != nil {
			return results, err
		}
	}
	return results, nil
}

// prepareRows tops the collection up to --seed-rows records (using the whole
// client pool) and returns record ids for get requests.
func prepareRows(ctx context.Context, api *apiClient, cfg config, log io.Writer) ([]string, error) {
	have, err := api.count(ctx, cfg.collection)
	if err != nil {
		return nil, fmt.Errorf("counting records: %w", err)
	}
	var ids []string
	if missing := cfg.seedRows - have; missing > 0 {
		fmt.Fprintf(log, "seeding %d records (collection has %d) with %d clients\n", missing, have, cfg.clients)
		start := time.Now()
		if ids, err = seed(ctx, api, cfg.collection, missing, cfg.clients); err != nil {
			return nil, err
		}
		el := time.Since(start)
		fmt.Fprintf(log, "seeded %d records in %.1fs (%.0f/s)\n", missing, el.Seconds(), float64(missing)/el.Seconds())
	}
	want := min(max(cfg.seedRows, 1000), maxGetIDs)
	if have > 0 && len(ids) < want {
		listed, err := api.listIDs(ctx, cfg.collection, want)
		if err != nil && len(listed) == 0 && len(ids) == 0 {
			return nil, fmt.Errorf("listing record ids: %w", err)
		}
		seen := make(map[string]bool, len(ids)+len(listed))
		for _, id := range ids {
			seen[id] = true
		}
		for _, id := range listed {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}
