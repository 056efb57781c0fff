package api

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"svcd/engine"
)

// A request body must keep arriving. There is no whole-request timeout on
// the http.Server (it would cut large uploads, and the realtime streams
// live as long as their clients); instead each body must arrive at a
// minimum average rate once a grace period is spent. Bodies are read
// through minRateBody, which puts a read deadline on the connection
// before every read: the reader starts with grace worth of waiting time,
// earns 1/rate seconds for each byte that arrives, may save up at most
// grace, and spends the time it waits in Read. A client that stalls for
// longer than its savings, or trickles slower than rate for long enough,
// hits the deadline: the read fails with a 408, the connection is closed
// and the memory the body held is released. Time the handler spends
// between reads is not counted. Requests without a body (GET, the
// WebSocket upgrade, SSE) are not touched.

// Defaults of Options.BodyMinRate and Options.BodyGrace.
const (
	defaultBodyMinRate = 1024 // bytes per second
	defaultBodyGrace   = 10 * time.Second
)

var errBodyTooSlow = engine.Errorf(engine.KindTimeout, "The request body arrived too slowly")

// bodyRate is the root middleware that installs minRateBody on every
// request with a body, and the body's budget accounting (body_budget.go).
func (s *Server) bodyRate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		st := &bodyState{}
		defer func() { s.budget.give(st.charged) }()
		if s.bodyMinRate <= 0 {
			next.ServeHTTP(w, withBodyState(r, st))
			return
		}
		b := &minRateBody{body: r.Body, rc: http.NewResponseController(w), rate: float64(s.bodyMinRate), grace: s.bodyGrace, credit: s.bodyGrace}
		r.Body = b
		defer b.finish()
		next.ServeHTTP(w, withBodyState(r, st))
	})
}

// minRateBody enforces the minimum rate on one request body.
type minRateBody struct {
	body   io.ReadCloser
	rc     *http.ResponseController
	rate   float64       // bytes per second
	grace  time.Duration // most waiting time that can be saved up
	credit time.Duration // waiting time left
	eof    bool          // the body was read to its end
	err    error         // the body was too slow
}

func (b *minRateBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.eof {
		// Past the end the server reads the connection in the
		// background: no deadline of ours may touch it now.
		return b.body.Read(p)
	}
	start := time.Now()
	// A writer that does not support deadlines (HTTP/2 through a proxy
	// test recorder, say) reads without one.
	_ = b.rc.SetReadDeadline(start.Add(b.credit))
	n, err := b.body.Read(p)
	now := time.Now()
	b.credit -= now.Sub(start)
	b.credit = min(b.credit+time.Duration(float64(n)/b.rate*float64(time.Second)), b.grace)
	switch {
	case err == io.EOF:
		// The server cleared the deadline when it saw the end, to read
		// the connection in the background.
		b.eof = true
	case err != nil && isTimeout(err):
		b.err = errBodyTooSlow
		return n, b.err
	}
	return n, err
}

func (b *minRateBody) Close() error { return b.body.Close() }

// finish bounds what the server does with a body the handler left unread
// (it reads up to 256 KiB of it to keep the connection): a grace period,
// not forever.
func (b *minRateBody) finish() {
	if !b.eof && b.err == nil {
		_ = b.rc.SetReadDeadline(time.Now().Add(b.grace))
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
