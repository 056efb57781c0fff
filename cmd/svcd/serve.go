package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"svcd/api"
	"svcd/cmd/svcd/stack"
	"svcd/internal/logfile"
)

// drainTimeout bounds how long in-flight requests may run after SIGTERM.
const drainTimeout = 10 * time.Second

// readHeaderTimeout bounds how long a client may take to send a request's
// headers (slowloris).
const readHeaderTimeout = 10 * time.Second

func runServe(args []string) error {
	cfg, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	snap, snapMode, err := readBootSnapshot(cfg) // apply_snapshot.go
	if err != nil {
		return err
	}
	// Every line names the node that wrote it (svcd cluster runs several
	// on one output).
	id, err := serveNodeID(cfg)
	if err != nil {
		return err
	}
	// The log folder (<data>/logs, one JSONL file per UTC day) gets the
	// same lines as stderr, and the HTTP layer's request lines.
	logs := logfile.Open(stack.LogsDir(cfg.dataDir), logfile.Options{})
	defer logs.Close()
	log := withLogFolder(newLogger(os.Stderr, logOptions{format: cfg.logFormat, level: cfg.logLevel}), logs, cfg.logLevel).With("node", id)
	useAsDefault(log)
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
	scfg := cfg.stackConfig()
	scfg.Logs = logs
	st, err := stack.Open(scfg, log)
	if err != nil {
		return err
	}
	opts := st.APIOptions(log)
	opts.SetupKey, opts.ClusterKey, opts.Region = cfg.setupKey, cfg.clusterKey, cfg.region
	opts.RateLimit, opts.TrustedProxies = cfg.rateLimit, cfg.proxies
	opts.BodyMinRate, opts.BodyGrace = cfg.bodyMinRate, cfg.bodyGrace
	opts.MCP.Info.Version = readBuildInfo().Version
	opts.Version, opts.PublicDir, opts.PublicSPA = readBuildInfo().Version, cfg.publicDir, cfg.publicSPA
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
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	// Shutdown drains requests in flight; the streams, which never end by
	// themselves, are ended at once (api/drain.go).
	hs.RegisterOnShutdown(srv.Drain)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	// The update check only logs; it starts after the node serves and
	// never holds the start-up or the shutdown.
	uctx, ucancel := context.WithCancel(context.Background())
	defer ucancel()
	go newUpdateChecker(st.Engine.Setting, readBuildInfo().Version, log).run(uctx)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	readyErr := st.WaitReady(ctx)
	cancel()
	if !cfg.noBanner {
		serveBanner(cfg, st, ln.Addr().String(), readyErr).print(os.Stderr, log, logOptions{format: cfg.logFormat}.resolve(os.Stderr).format)
	}
	if snap != nil {
		if err := applyBootSnapshot(st, snap, snapMode, cfg.applySnapshot, log); err != nil {
			hs.Close()
			sock.Close()
			return errors.Join(err, st.Close())
		}
	}

	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-sigc:
		log.Info("shutting down", "signal", sig.String())
	case err := <-errc:
		log.Error("HTTP server stopped", "err", err)
	}
	signal.Stop(sigc)
	ucancel()
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

// serveNodeID is the id the node runs as: --node-id, else the one kept
// in the data directory (created there on a first start).
func serveNodeID(cfg *config) (string, error) {
	if cfg.nodeID != "" {
		return cfg.nodeID, nil
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return "", err
	}
	return stack.NodeID(cfg.dataDir, "")
}
