// Package push speaks the push providers' wire protocols for
// engine/notify: Firebase Cloud Messaging's HTTP v1 API with an OAuth2
// access token minted from a service account (fcm.go), Apple's push
// service with token-based authentication over HTTP/2 (apns.go, built on
// github.com/sideshow/apns2), and the hosted push provider's REST API
// with "Authorization: Basic <REST_KEY>" (hostedpush.go).
//
// It is a leaf library: it imports nothing of svcd. The engine may not
// import net/http, so engine/notify declares what it needs (a Pusher)
// and the composition root adapts a Client to it, giving the Client the
// node's egress-guarded HTTP client and dialer, so every provider URL
// (settings, which tests point at local servers) passes the SSRF guard.
//
// A send's outcome is one of four (SPEC.md "Push provider behavior"):
// sent; the device token is dead (FCM's UNREGISTERED or 404, APNs' 410);
// a transient failure to retry (5xx, 429, network); a permanent failure
// to drop (another 4xx).
package push

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Message is one notification.
type Message struct {
	Title string
	Body  string
	Data  map[string]any
	// Key names the message across retries: FCM's Android notification
	// tag, APNs' collapse id, the hosted provider's idempotency key (a
	// UUID there; other keys are not sent to it).
	Key string
}

// Result is what became of one send.
type Result int

// Outcomes of a send.
const (
	Sent Result = iota
	Dead
	Retry
	Drop
)

func (r Result) String() string {
	switch r {
	case Sent:
		return "sent"
	case Dead:
		return "dead"
	case Retry:
		return "retry"
	}
	return "drop"
}

// Outcome is one send's outcome and, for a failure, what the provider
// said.
type Outcome struct {
	Result Result
	Detail string
}

// Options configure a Client.
type Options struct {
	// HTTP carries FCM's and the hosted provider's requests and FCM's
	// token requests (the node's egress-guarded client; nil:
	// http.DefaultClient).
	HTTP *http.Client
	// Dial opens APNs' connections (the egress guard's dialer; nil: a
	// plain net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// RootCAs are the roots APNs' TLS trusts (nil: the system's); tests
	// set their server's.
	RootCAs *x509.CertPool
}

// Client sends through every provider. It keeps one credential per
// provider (an FCM token source, an APNs client with its JWT), rebuilt
// when the provider's settings change; it is safe for concurrent use.
type Client struct {
	opts  Options
	fcm   *fcm
	apns  *apns
	onesi *hosted
}

// New returns a client.
func New(opts Options) *Client {
	if opts.HTTP == nil {
		opts.HTTP = http.DefaultClient
	}
	if opts.Dial == nil {
		d := &net.Dialer{}
		opts.Dial = d.DialContext
	}
	c := &Client{opts: opts}
	c.fcm, c.apns, c.onesi = &fcm{c: c}, &apns{c: c}, &hosted{c: c}
	return c
}

// sender is one provider's protocol.
type sender interface {
	push(ctx context.Context, cfg map[string]string, msg Message, targets []string) []Outcome
	probe(ctx context.Context, cfg map[string]string) error
}

func (c *Client) sender(provider string) sender {
	switch provider {
	case "fcm":
		return c.fcm
	case "apns":
		return c.apns
	case "hostedpush":
		return c.onesi
	}
	return nil
}

// Push sends msg through provider, configured by cfg (its settings by
// member name), to each target (device tokens; user ids for hostedpush),
// and answers one outcome per target, in order.
func (c *Client) Push(ctx context.Context, provider string, cfg map[string]string, msg Message, targets []string) []Outcome {
	s := c.sender(provider)
	if s == nil {
		return all(len(targets), Outcome{Result: Drop, Detail: "unknown push provider " + provider})
	}
	return s.push(ctx, cfg, msg, targets)
}

// Probe checks that provider answers and accepts cfg's credentials,
// sending no notification.
func (c *Client) Probe(ctx context.Context, provider string, cfg map[string]string) error {
	s := c.sender(provider)
	if s == nil {
		return fmt.Errorf("unknown push provider %s", provider)
	}
	return s.probe(ctx, cfg)
}

// all is n copies of o.
func all(n int, o Outcome) []Outcome {
	out := make([]Outcome, n)
	for i := range out {
		out[i] = o
	}
	return out
}

// byStatus classifies an HTTP answer that is not a success: 429 and 5xx
// are transient, other statuses permanent.
func byStatus(status int, detail string) Outcome {
	if status == http.StatusTooManyRequests || status >= 500 {
		return Outcome{Result: Retry, Detail: detail}
	}
	return Outcome{Result: Drop, Detail: detail}
}

// netFailure is a request that got no answer: transient.
func netFailure(err error) Outcome {
	return Outcome{Result: Retry, Detail: err.Error()}
}

// maxAnswer bounds the bytes of a provider's answer read.
const maxAnswer = 64 << 10

// readAnswer reads a response body, bounded.
func readAnswer(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, maxAnswer))
	return b
}

// clip shortens a provider's answer for a message.
func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// fingerprint identifies a set of settings without keeping them.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// each runs send for every target, at most workers at once, and answers
// the outcomes in the targets' order.
func each(ctx context.Context, targets []string, workers int, send func(ctx context.Context, target string) Outcome) []Outcome {
	out := make([]Outcome, len(targets))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, t := range targets {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = send(ctx, t)
		}()
	}
	wg.Wait()
	return out
}
