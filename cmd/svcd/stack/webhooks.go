package stack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"svcd/api/egress"
	"svcd/engine/webhooks"
	"svcd/scheduler"
)

// Webhook deliveries: the module (engine/webhooks) makes and records the
// attempts; the leader's dispatcher (scheduler.WebhookDispatcher) decides
// when; this file joins the two and gives the module its HTTP client.

// webhookSender posts deliveries through the egress guard
// (hooks.http.deny/allow), with a connection pool of its own and no
// redirect followed: a 3xx is the answer (SPEC.md).
type webhookSender struct{ client *http.Client }

func newWebhookSender(g *egress.Guard) *webhookSender {
	return &webhookSender{client: &http.Client{
		Transport:     g.NewTransport(16),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Send implements webhooks.Sender.
func (s *webhookSender) Send(ctx context.Context, r *webhooks.Request) (*webhooks.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	if sc := strings.ToLower(req.URL.Scheme); sc != "http" && sc != "https" {
		return nil, fmt.Errorf("scheme %q is not allowed", req.URL.Scheme)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, webhooks.CaptureLimit))
	if err != nil {
		return nil, err
	}
	// Read a little more so that the connection can serve the next
	// delivery; a receiver that answers at length loses it.
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	return &webhooks.Response{Status: res.StatusCode, Body: body}, nil
}

// webhookOutbox adapts the module to the dispatcher's interface.
type webhookOutbox struct{ m *webhooks.Webhooks }

func (o webhookOutbox) Claim(ctx context.Context, claimer string, limit int, take func(string) bool) ([]scheduler.DeliveryTask, error) {
	list, err := o.m.Claim(ctx, claimer, limit, take)
	if err != nil {
		return nil, err
	}
	tasks := make([]scheduler.DeliveryTask, len(list))
	for i, a := range list {
		tasks[i] = webhookTask{o.m, a}
	}
	return tasks, nil
}

func (o webhookOutbox) Complete(ctx context.Context, claimer string, outcomes []scheduler.DeliveryOutcome) error {
	list := make([]webhooks.Outcome, 0, len(outcomes))
	for _, x := range outcomes {
		if oc, ok := x.(webhooks.Outcome); ok {
			list = append(list, oc)
		}
	}
	return o.m.Complete(ctx, claimer, list)
}

func (o webhookOutbox) Prune(ctx context.Context) error { return o.m.Prune(ctx) }
func (o webhookOutbox) Concurrency() int                { return o.m.Concurrency() }
func (o webhookOutbox) Queued() <-chan struct{}         { return o.m.Queued() }

// webhookTask is one claimed delivery.
type webhookTask struct {
	m *webhooks.Webhooks
	a *webhooks.Attempt
}

func (t webhookTask) Target() string { return t.a.WebhookID }

func (t webhookTask) Send(ctx context.Context) scheduler.DeliveryOutcome { return t.m.Send(ctx, t.a) }
