package harness

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"svcd/jepsen/checker"
)

// WebhookReceiver is a real HTTP server that records every webhook
// delivery it gets (the nodes post to it through their egress guard, so
// its address must be allowed with hooks.http.allow). It answers 200 while
// open; Hold makes it keep each request waiting until Release (or until
// the sender gives up), to leave deliveries in flight.
type WebhookReceiver struct {
	// URL is where to point a webhook.
	URL string

	srv  *http.Server
	ln   net.Listener
	mu   sync.Mutex
	got  []checker.WebhookReceipt
	hold chan struct{} // nil: answer at once
}

// StartWebhookReceiver listens on host (an address of this machine the
// nodes reach: 127.0.0.1, or the bridge's HostIP in network namespaces).
func StartWebhookReceiver(host string) (*WebhookReceiver, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	r := &WebhookReceiver{ln: ln, URL: "http://" + ln.Addr().String() + "/hook"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *WebhookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	from, _, _ := net.SplitHostPort(req.RemoteAddr)
	rc := checker.WebhookReceipt{At: time.Now(), From: from, Delivery: req.Header.Get("X-Svc-Delivery"),
		Event: req.Header.Get("X-Svc-Event"), Timestamp: req.Header.Get("X-Svc-Timestamp"),
		Signature: req.Header.Get("X-Svc-Signature"), Body: body}
	r.mu.Lock()
	r.got = append(r.got, rc)
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-req.Context().Done():
			return
		}
	}
	w.Write([]byte("ok"))
}

// Hold keeps the requests that arrive from now on waiting until Release.
func (r *WebhookReceiver) Hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold == nil {
		r.hold = make(chan struct{})
	}
}

// Release answers the waiting requests, and the next ones at once.
func (r *WebhookReceiver) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
}

// Receipts is a copy of what was received so far.
func (r *WebhookReceiver) Receipts() []checker.WebhookReceipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]checker.WebhookReceipt(nil), r.got...)
}

// Close stops the server (waiting requests are cut).
func (r *WebhookReceiver) Close() error {
	r.Release()
	return r.srv.Close()
}
