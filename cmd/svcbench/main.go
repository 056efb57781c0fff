// Command svcbench is an HTTP load generator for svcd. It speaks only the
// public HTTP API, so it can drive any node of a cluster (or an older build).
//
// It authenticates as admin (POST /api/v1/admin/setup, falling back to
// /api/v1/admin/auth/login when an admin exists; X-Setup-Key is sent from
// $SVC_SETUP_KEY when set), makes sure the benchmark collection exists
// (fields title, n, done; every rule open), then runs each scenario with a
// pool of concurrent clients sharing one keep-alive http.Client:
//
//	create  POST  /api/v1/:collection
//	get     GET   /api/v1/:collection/:id (random ids of existing records)
//	list    GET   /api/v1/:collection?perPage=30[&skipTotal=1]
//	filter  GET   /api/v1/:collection?perPage=30&filter=n >= S/2 && done = true
//	        (S is --seed-rows: seeded records have n = 0..S-1 and done for
//	        odd n, so a quarter of them match)
//	update  PATCH /api/v1/:collection/:id (random ids, a new title)
//	cas     PATCH /api/v1/:collection/:id with If-Match: each client owns up
//	        to 100 records, updates them in turn and keeps the ETag of each
//	        answer; their current ETags are fetched before the run
//	mixed   20% create, 60% get, 20% list
//	batch   POST  /api/v1/batch of --batch-size creates (one log command
//	        each); reports rows=N rows/s=X besides the requests
//	ingest  POST  /api/v1/admin/import/:collection: --rows records as CSV,
//	        --rows-per-request per request (0: one request), up to
//	        --clients at a time; one pass, no warmup; rows/s is the
//	        records created over the wall time of the whole import
//	queue   POST  /api/v1/admin/queues/bench_jobs/jobs: --jobs queue jobs
//	        enqueued by the clients, run by one worker of
//	        --worker-concurrency on the leader; one pass, no warmup;
//	        jobs/s is the jobs run to success over the wall time from the
//	        first enqueue to the last success (queue.go)
//	all     create, then get, then list (the default)
//	fanout, fanout-rate, fanout-idle
//	        realtime delivery to --subscribers WebSocket or SSE
//	        subscriptions (--transport): see fanout.go
//	upload  POST  /api/v1/files/:collection/:id/file of --file-size random
//	        bytes (multipart, as the admin), each client replacing the
//	        file of its own record; reports MB/s besides the requests
//	download
//	        GET   /api/v1/files/:filename of files uploaded first (random
//	        choice), the whole body read; reports MB/s
//	upload-big
//	        one upload of --file-size (default 1GB) streamed from a
//	        generator to the first node while the server's VmRSS is
//	        sampled every 20 ms (--pid, else the pid its metrics report):
//	        time, MB/s and the server's memory before, at peak, after
//
// The file scenarios (files.go) use their own collection,
// --files-collection, and raise files.max_upload_bytes to --file-size for
// the run when it is lower.
//
// --scenario also takes a comma-separated list (filter,update,cas). Before
// every scenario but create the collection is topped up to --seed-rows
// records. Every scenario runs a --warmup phase that is not measured, then
// a --duration phase in which every latency is recorded. Non-2xx answers
// count as errors and the first few are printed to stderr, except 412
// (If-Match failed), which is counted apart and printed as 412s=N.
//
// Nodes: --url names one node (a single server, or any one node of a
// cluster). --urls takes a comma-separated list of nodes: without --spread
// client i keeps to node i mod n; with --spread every client sends its
// requests to the nodes in turn. Authentication, seeding and ETag fetches go
// to the first node (put the leader first); the server figures are summed
// over all the listed nodes.
//
// One line per scenario goes to stdout:
//
//	create  clients=16  dur=10.0s  reqs=93012  rps=9301  p50=1.52ms p95=3.1ms p99=4.9ms max=22ms  errors=0  cpu/req=96µs  cmds/txn=12.4 (p50 11)
//
// (with "nodes=3 spread" or "nodes=3 pinned" after clients for several
// nodes). cpu/req and cmds/txn come from GET /api/v1/_/metrics (snapshots
// before and after the measured phase) and are omitted when the server
// lacks that endpoint. cpu/req is the server processes' CPU time per
// request; cmds/txn is FSM commands per SQLite transaction, with the
// server-reported p50.
//
// Usage:
//
//	svcbench [--url http://127.0.0.1:8090 | --urls URL1,URL2,... [--spread]]
//	         [--scenario all|create|get|list|filter|update|cas|mixed[,...]]
//	         [--clients 16] [--duration 10s] [--warmup 2s] [--seed-rows 10000]
//	         [--collection bench_items] [--fresh] [--skip-total] [--json]
//	         [--email bench@example.com] [--password ...] [--timeout 30s]
//	         [--subscribers 100] [--transport ws|sse] [--writes 20]
//	         [--write-interval 250ms] [--pid PID]
//	         [--batch-size 100] [--rows 100000] [--rows-per-request 0]
//	         [--file-size 1MB] [--files-collection bench_files]
//	         [--jobs 5000] [--worker-concurrency 16]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// config holds the command-line settings.
type config struct {
	url        string
	urls       []string // --urls; when empty, url alone
	spread     bool
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
	// Fan-out scenarios (fanout.go).
	subscribers   int
	transport     string
	writes        int
	writeInterval time.Duration
	pid           int
	// Bulk scenarios (batch.go, ingest.go).
	batchSize      int
	rows           int
	rowsPerRequest int
	// File scenarios (files.go): 0 is each scenario's default.
	fileSize        int64
	filesCollection string
	// The queue scenario (queue.go).
	jobs              int
	workerConcurrency int
}

// maxGetIDs bounds how many existing record ids are listed for get requests.
const maxGetIDs = 100000

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("svcbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8090", "server base URL")
	fs.Func("urls", "comma-separated base URLs of several nodes (the first gets auth and seeding)", func(s string) error {
		c.urls = strings.Split(s, ",")
		return nil
	})
	fs.BoolVar(&c.spread, "spread", false, "with --urls: spread each client's requests over the nodes in turn (default: client i keeps to node i mod n)")
	fs.StringVar(&c.email, "email", "bench@example.com", "admin email (created on first run)")
	fs.StringVar(&c.password, "password", "bench-password-0123456789", "admin password (16+ chars)")
	fs.StringVar(&c.scenario, "scenario", scAll, scenarioNames+" (create, get, list in sequence), or a comma-separated list")
	fs.IntVar(&c.clients, "clients", 16, "concurrent clients")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured duration per scenario")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warmup per scenario")
	fs.IntVar(&c.seedRows, "seed-rows", 10000, "records the collection must hold before get/list/mixed")
	fs.StringVar(&c.collection, "collection", "bench_items", "collection to use")
	fs.BoolVar(&c.fresh, "fresh", false, "drop and recreate the collection first")
	fs.BoolVar(&c.skipTotal, "skip-total", false, "add skipTotal=1 to list requests")
	fs.BoolVar(&c.json, "json", false, "also print each result as a JSON line")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.IntVar(&c.subscribers, "subscribers", 100, "fan-out scenarios: realtime subscriptions, spread over the nodes")
	fs.StringVar(&c.transport, "transport", transportWS, "fan-out scenarios: ws (WebSocket /realtime) or sse (/api/v1/realtime)")
	fs.IntVar(&c.writes, "writes", 20, "fanout: creates whose delivery is timed")
	fs.DurationVar(&c.writeInterval, "write-interval", 250*time.Millisecond, "fanout: time between two timed creates")
	fs.IntVar(&c.pid, "pid", 0, "fanout-idle, upload-big: server process whose VmRSS is read (default: the pid its metrics report)")
	fs.IntVar(&c.batchSize, "batch-size", 100, "batch: creates per POST /api/v1/batch (1-100)")
	fs.IntVar(&c.rows, "rows", 100000, "ingest: records imported as CSV")
	fs.IntVar(&c.rowsPerRequest, "rows-per-request", 0, "ingest: CSV rows per import request (0: all in one)")
	fs.Func("file-size", "upload, download, upload-big: file size, e.g. 10KB, 1MB, 50MB, 1GB, 512KiB (default 1MB; upload-big 1GB)", func(s string) error {
		n, err := parseSize(s)
		c.fileSize = n
		return err
	})
	fs.StringVar(&c.filesCollection, "files-collection", "bench_files", "upload, download, upload-big: collection with the file field (created when missing)")
	fs.IntVar(&c.jobs, "jobs", 5000, "queue: jobs enqueued and run")
	fs.IntVar(&c.workerConcurrency, "worker-concurrency", 16, "queue: the worker's concurrency (1-100)")
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
	urlSet := false
	fs.Visit(func(f *flag.Flag) { urlSet = urlSet || f.Name == "url" })
	if _, err := newTargets(c.nodeURLs(), c.spread); err != nil {
		return c, err
	}
	switch {
	case urlSet && len(c.urls) > 0:
		return c, errors.New("--url and --urls: give one of them")
	case len(scenarios(c.scenario)) == 0:
		return c, fmt.Errorf("--scenario: unknown %q (want %s)", c.scenario, scenarioNames)
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
	case c.subscribers < 1:
		return c, errors.New("--subscribers must be >= 1")
	case !validTransport(c.transport):
		return c, fmt.Errorf("--transport: %q (want ws or sse)", c.transport)
	case c.writes < 1:
		return c, errors.New("--writes must be >= 1")
	case c.writeInterval < 0:
		return c, errors.New("--write-interval must be >= 0")
	case c.pid < 0:
		return c, errors.New("--pid must be >= 0")
	case c.batchSize < 1 || c.batchSize > 100:
		return c, errors.New("--batch-size must be 1 to 100")
	case c.rows < 1:
		return c, errors.New("--rows must be >= 1")
	case c.rowsPerRequest < 0:
		return c, errors.New("--rows-per-request must be >= 0")
	case c.filesCollection == "":
		return c, errors.New("--files-collection must not be empty")
	case c.jobs < 1:
		return c, errors.New("--jobs must be >= 1")
	case c.workerConcurrency < 1 || c.workerConcurrency > 100:
		return c, errors.New("--worker-concurrency must be 1 to 100")
	}
	c.setupKey = os.Getenv("SVC_SETUP_KEY")
	return c, nil
}

// nodeURLs returns the nodes to benchmark: --urls, or else --url.
func (c config) nodeURLs() []string {
	if len(c.urls) > 0 {
		return c.urls
	}
	return []string{c.url}
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
	nodes, err := newTargets(cfg.nodeURLs(), cfg.spread)
	if err != nil {
		return nil, err
	}
	hc := newHTTPClient(cfg.clients, cfg.timeout)
	defer hc.CloseIdleConnections()
	api := newAPIClient(nodes.bases[0], hc, cfg.setupKey)

	if err := api.authenticate(ctx, cfg.email, cfg.password); err != nil {
		return nil, err
	}
	if err := api.ensureCollection(ctx, cfg.collection, cfg.fresh); err != nil {
		return nil, err
	}
	if api.metrics(ctx, api.base) == nil {
		fmt.Fprintln(log, "note: GET /api/v1/_/metrics unavailable; server CPU and FSM figures omitted")
	}

	env := scenarioEnv{
		api: api, nodes: nodes, coll: cfg.collection, clients: cfg.clients,
		seedRows: cfg.seedRows, skipTotal: cfg.skipTotal, batchSize: cfg.batchSize,
		filesColl: cfg.filesCollection, log: log,
	}
	var (
		results  []Result
		prepared bool
		// freshFiles: --fresh, and the files collection not dropped yet.
		freshFiles = cfg.fresh
	)
	for _, sc := range scenarios(cfg.scenario) {
		if isFileScenario(sc) {
			r, err := runFileScenario(ctx, env, cfg, sc, freshFiles, log)
			freshFiles = false
			if err != nil {
				return results, fmt.Errorf("%s: %w", sc, err)
			}
			results = append(results, r)
			if err := writeResult(out, log, r, cfg.json); err != nil {
				return results, err
			}
			continue
		}
		if isFanout(sc) {
			r, err := runFanoutScenario(ctx, env, cfg, sc, log)
			if err != nil {
				return results, fmt.Errorf("%s: %w", sc, err)
			}
			results = append(results, r)
			if err := writeResult(out, log, r, cfg.json); err != nil {
				return results, err
			}
			continue
		}
		if sc == scIngest || sc == scQueue {
			run := runIngest
			if sc == scQueue {
				run = runQueue
			}
			r, err := run(ctx, env, cfg, log)
			if err != nil {
				return results, fmt.Errorf("%s: %w", sc, err)
			}
			results = append(results, r)
			if err := writeResult(out, log, r, cfg.json); err != nil {
				return results, err
			}
			continue
		}
		if needsRows(sc) && !prepared {
			if env.ids, err = prepareRows(ctx, api, cfg, log); err != nil {
				return results, err
			}
			prepared = true
		}
		ld, err := newLoad(ctx, sc, env)
		if err != nil {
			return results, err
		}
		fmt.Fprintf(log, "%s: %d clients on %s, warmup %s, measuring %s\n", sc, cfg.clients, nodes.describe(), cfg.warmup, cfg.duration)
		r := runScenario(ctx, env, sc, ld, cfg.warmup, cfg.duration)
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
