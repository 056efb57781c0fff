package webhooks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Sender makes one HTTP attempt: a POST of Body to URL with Header, that
// must go through the node's egress guard (hooks.http.deny/allow), must
// not follow redirects (a 3xx is the answer), and ends when ctx does. It
// reads at most CaptureLimit bytes of the answer's body. The engine
// speaks no HTTP itself: the composition root passes one.
type Sender interface {
	Send(ctx context.Context, req *Request) (*Response, error)
}

// Request is one attempt's request.
type Request struct {
	URL    string
	Header map[string]string
	Body   []byte
}

// Response is what an attempt got back.
type Response struct {
	Status int
	Body   []byte // at most CaptureLimit bytes
}

// CaptureLimit is how much of an answer's body a delivery keeps (SPEC.md:
// 2 KB).
const CaptureLimit = 2048

// UserAgent is the user-agent of every delivery.
const UserAgent = "svc-webhook"

// Outcome is what one attempt came to, as Complete records it.
type Outcome struct {
	DeliveryID string `json:"id"`
	Attempt    int64  `json:"attempt"`
	OK         bool   `json:"ok"`
	Status     int    `json:"status,omitempty"`
	Body       string `json:"body,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

var errNoSender = errors.New("this node cannot send webhooks (no HTTP client)")

// Send makes attempt a: builds and signs the body, posts it under the
// webhook's timeout, and classifies the answer (2xx succeeds; anything
// else, 3xx included, or no answer, fails).
func (m *Webhooks) Send(ctx context.Context, a *Attempt) Outcome {
	out := Outcome{DeliveryID: a.DeliveryID, Attempt: a.Number}
	secret, err := m.openSecret(a.secret)
	if err != nil {
		out.Error = "cannot sign: " + err.Error()
		return out
	}
	body, err := m.body(a)
	if err != nil {
		out.Error = "cannot build the body: " + err.Error()
		return out
	}
	if m.sender == nil {
		out.Error = errNoSender.Error()
		return out
	}
	ts := m.core.Now().Unix()
	header := make(map[string]string, len(a.headers)+6)
	for k, v := range a.headers {
		if !stripped(k) {
			header[k] = v
		}
	}
	header["Content-Type"] = "application/json"
	header["User-Agent"] = UserAgent
	header["X-Svc-Event"] = a.event
	header["X-Svc-Delivery"] = a.DeliveryID
	header["X-Svc-Timestamp"] = strconv.FormatInt(ts, 10)
	header["X-Svc-Signature"] = Sign(secret, ts, body)
	actx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	start := time.Now()
	res, err := m.sender.Send(actx, &Request{URL: a.url, Header: header, Body: body})
	out.DurationMs = time.Since(start).Milliseconds()
	switch {
	case err != nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		out.Error = fmt.Sprintf("timed out after %d ms", a.timeout.Milliseconds())
	case err != nil:
		out.Error = err.Error()
	default:
		out.Status = res.Status
		out.Body = capture(res.Body)
		switch {
		case res.Status >= 200 && res.Status < 300:
			out.OK = true
		case res.Status >= 300 && res.Status < 400:
			out.Error = fmt.Sprintf("HTTP %d: redirects are not followed", res.Status)
		default:
			out.Error = fmt.Sprintf("HTTP %d", res.Status)
		}
	}
	return out
}

// capture is the first CaptureLimit bytes of b as text, cut on a
// character boundary.
func capture(b []byte) string {
	if len(b) > CaptureLimit {
		b = b[:CaptureLimit]
	}
	for len(b) > 0 && !utf8.Valid(b) && len(b) > CaptureLimit-utf8.UTFMax {
		b = b[:len(b)-1]
	}
	return string(b)
}
