package stack

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"svcd/api/egress"
	"svcd/engine/notify"
	"svcd/engine/queue"
	"svcd/internal/push"
	"svcd/scheduler"
)

// The notifications module's outside: its push protocols (internal/push
// over the egress guard), its push jobs (engine/queue's built-in queues)
// and their handler on the leader's dispatcher. Each side declares what
// it needs; these adapters join them.

// pushConcurrency is how many push jobs of one provider run at once on
// the leader.
const pushConcurrency = 4

// newPusher is the push protocols' client: FCM's and the hosted
// provider's requests through the guarded HTTP client, APNs' HTTP/2
// connections through a dialer the guard checks; roots (nil: the
// system's) are what APNs' TLS trusts.
func newPusher(guard *egress.Guard, roots *x509.CertPool) notify.Pusher {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("egress: unexpected dial address %q", address)
		}
		return guard.Check(ap.Addr())
	}}
	return pusher{push.New(push.Options{HTTP: guard.Client(), Dial: d.DialContext, RootCAs: roots})}
}

// pusher adapts internal/push to notify.Pusher.
type pusher struct{ c *push.Client }

func (p pusher) Push(ctx context.Context, provider string, cfg map[string]string, msg notify.PushMessage, targets []string) []notify.PushOutcome {
	outs := p.c.Push(ctx, provider, cfg, push.Message{Title: msg.Title, Body: msg.Body, Data: msg.Data, Key: msg.Key}, targets)
	res := make([]notify.PushOutcome, len(outs))
	for i, o := range outs {
		r := notify.PushDrop
		switch o.Result {
		case push.Sent:
			r = notify.PushSent
		case push.Dead:
			r = notify.PushDead
		case push.Retry:
			r = notify.PushRetry
		}
		res[i] = notify.PushOutcome{Result: r, Detail: o.Detail}
	}
	return res
}

func (p pusher) Probe(ctx context.Context, provider string, cfg map[string]string) error {
	return p.c.Probe(ctx, provider, cfg)
}

// pushJobs adapts engine/queue's enqueue to notify.Jobs.
type pushJobs struct{ q *queue.Queue }

func (j pushJobs) Enqueue(ctx context.Context, name string, payload json.RawMessage, retries, retryDelayMs int64) (string, bool, error) {
	res, _, err := j.q.EnqueueJSON(ctx, name, payload, queue.EnqueueOptions{Retries: &retries, RetryDelayMs: &retryDelayMs,
		Backoff: queue.BackoffExponential})
	if err != nil {
		return "", false, err
	}
	return res.JobID, res.Deduped, nil
}

// pushHandler adapts notify's job handler to scheduler.JobHandler.
type pushHandler struct{ n *notify.Notifications }

func (h pushHandler) HandleJob(ctx context.Context, j scheduler.Claimed) (any, error) {
	return h.n.HandleJob(ctx, notify.Job{ID: j.ID, Queue: j.Queue, Attempt: j.Attempt, Payload: j.Payload})
}

// pushQueues are the built-in queues of the push providers, for the
// leader's dispatcher.
func (d *Domain) pushQueues() []scheduler.BuiltinQueue {
	var out []scheduler.BuiltinQueue
	for _, q := range notify.Queues() {
		out = append(out, scheduler.BuiltinQueue{Queue: q, Concurrency: pushConcurrency, Handler: pushHandler{d.Notify}})
	}
	return out
}
