package api

import (
	"context"
	"net/http"
)

// A node shutting down drains its requests (http.Server.Shutdown) for a
// bounded time. A stream (realtime over SSE or WebSocket, PocketBase's
// realtime, the MCP stream) never ends by itself, so each one would hold
// the shutdown to the end of that bound and then be cut. Drain ends them
// at once instead: an SSE client reconnects (EventSource does, with
// Last-Event-ID, to any node), a WebSocket gets 1001 Going Away. Ordinary
// requests are not touched: they finish, and their writes with them.

// drainSignal is closed, once, when the node starts shutting down.
type drainSignal struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newDrainSignal() drainSignal {
	ctx, cancel := context.WithCancel(context.Background())
	return drainSignal{ctx: ctx, cancel: cancel}
}

// Drain ends every open stream of this server; requests in flight go on.
// Call it when the HTTP server starts shutting down
// (http.Server.RegisterOnShutdown). It is safe to call more than once.
func (s *Server) Drain() { s.drain.cancel() }

// untilDrain runs a stream handler with a request context that also ends
// when the node drains.
func (s *Server) untilDrain(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(s.drain.ctx, cancel)
		defer stop()
		h(w, r.WithContext(ctx))
	}
}

// onDrain runs f when the node drains, until the returned stop is called.
func (s *Server) onDrain(f func()) (stop func() bool) {
	return context.AfterFunc(s.drain.ctx, f)
}
