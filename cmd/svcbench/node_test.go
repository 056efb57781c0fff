package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"svcd/api"
	"svcd/cmd/svcd/stack"
	"svcd/engine/password"
)

// realNode starts a real single svcd node in-process (state machine, Raft
// with its fsynced log, engine, HTTP API) on a temporary data dir and
// returns its HTTP handler. Serve it with serveNode.
func realNode(t *testing.T) http.Handler {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	st, err := stack.Open(stack.Config{
		DataDir:        t.TempDir(),
		PasswordParams: password.Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32},
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return api.New(st.APIOptions(log))
}

// serveNode serves h on a loopback port; hits counts the requests that
// match, when match is not nil.
func serveNode(t *testing.T, h http.Handler, match func(*http.Request) bool) (srv *httptest.Server, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if match != nil && match(r) {
			hits.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

// isFilterList matches the requests of the filter scenario.
func isFilterList(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/") &&
		r.URL.Query().Get("perPage") == "30" && r.URL.Query().Has("filter")
}
