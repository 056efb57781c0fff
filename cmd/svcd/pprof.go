package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// startPprof serves Go's profiler on SVC_PPROF_ADDR (for example
// 127.0.0.1:6060) when set. It is off by default and should listen on
// loopback only: profiles reveal internals.
func startPprof(log *slog.Logger) {
	addr := os.Getenv("SVC_PPROF_ADDR")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("pprof listener", "err", err)
		return
	}
	log.Info("profiler listening", "addr", ln.Addr().String())
	go (&http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}).Serve(ln)
}
