package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"svcd/api"
	"svcd/cmd/svcd/stack"
)

// drainTimeout bounds how long in-flight requests may run after SIGTERM.
const drainTimeout = 10 * time.Second

// readHeaderTimeout bounds how long a client may take to send a request's
// headers (slowloris).
const readHeaderTimeout = 10 * time.Second

func newLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func runServe(args []string) error {
	cfg, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	log := newLogger(cfg.logLevel)
	startPprof(log)
	reseeded, err := resumeReseed(cfg, log) // reseed_start.go
	if err != nil {
		return err
	}
	if !reseeded && cfg.join != "" && !hasRaftState(cfg.dataDir) {
		if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
			return err
		}
		id, err := stack.NodeID(cfg.dataDir, cfg.nodeID)
		if err != nil {
			return err
		}
		if cfg.nodeID == "" {
			cfg.nodeID = id
		}
		jctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err = joinCluster(jctx, cfg, id, log)
		cancel()
		if err != nil {
			return err
		}
	}
	st, err := stack.Open(cfg.stackConfig(), log)
	if err != nil {
		return err
	}
	opts := st.APIOptions(log)
	opts.SetupKey, opts.ClusterKey, opts.Region = cfg.setupKey, cfg.clusterKey, cfg.region
	opts.RateLimit, opts.TrustedProxies = cfg.rateLimit, cfg.proxies
	opts.BodyMinRate, opts.BodyGrace = cfg.bodyMinRate, cfg.bodyGrace
	srv := api.New(opts)
	ln, err := listenHTTP(cfg.httpAddr, cfg.reusePort)
	if err != nil {
		st.Close()
		return fmt.Errorf("listen %s: %w", cfg.httpAddr, err)
	}
	sock, err := listenAdminSocket(cfg.dataDir, st, log)
	if err != nil {
		ln.Close()
		st.Close()
		return err
	}
	// No ReadTimeout or WriteTimeout: they would cut large uploads and the
	// realtime streams. Headers must arrive within ReadHeaderTimeout; a
	// body must keep a minimum rate (api/body_rate.go).
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	readyErr := st.WaitReady(ctx)
	cancel()
	printBanner(cfg, st, ln.Addr().String(), readyErr)

	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-sigc:
		log.Info("shutting down", "signal", sig.String())
	case err := <-errc:
		log.Error("HTTP server stopped", "err", err)
	}
	signal.Stop(sigc)
	dctx, dcancel := context.WithTimeout(context.Background(), drainTimeout)
	defer dcancel()
	herr := hs.Shutdown(dctx)
	sock.Close()
	if herr != nil && !errors.Is(herr, http.ErrServerClosed) {
		log.Warn("drain incomplete", "err", herr)
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped cleanly")
	return nil
}

func printBanner(cfg *config, st *stack.Stack, addr string, readyErr error) {
	host := addr
	if strings.HasPrefix(host, "[::]:") || strings.HasPrefix(host, "0.0.0.0:") {
		host = "127.0.0.1:" + host[strings.LastIndexByte(host, ':')+1:]
	}
	fmt.Fprintf(os.Stderr, "\nsvcd %s serving at http://%s\n", version, host)
	fmt.Fprintf(os.Stderr, "  REST API:   http://%s/api/v1\n", host)
	fmt.Fprintf(os.Stderr, "  data:       %s\n", cfg.dataDir)
	fmt.Fprintf(os.Stderr, "  node:       %s (raft %s)\n", st.Node.NodeID(), st.Node.State())
	if readyErr != nil {
		fmt.Fprintf(os.Stderr, "  WARNING: not ready yet: %v\n", readyErr)
	}
	if !st.Auth.Admins().HasAdmin() {
		fmt.Fprintf(os.Stderr, "\nNo admin exists yet. Create the first one with either:\n")
		fmt.Fprintf(os.Stderr, "  svcd admin create you@example.com 'a-long-password'\n")
		fmt.Fprintf(os.Stderr, "  curl -X POST http://%s/api/v1/admin/setup -H 'Content-Type: application/json' \\\n", host)
		fmt.Fprintf(os.Stderr, "       -d '{\"email\":\"you@example.com\",\"password\":\"a-long-password\"}'\n")
		if cfg.setupKey != "" {
			fmt.Fprintf(os.Stderr, "  (SVC_SETUP_KEY is set: add -H 'X-Setup-Key: <the key>' to the request)\n")
		}
	}
	fmt.Fprintln(os.Stderr)
}
