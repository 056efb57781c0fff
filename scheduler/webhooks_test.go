package scheduler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// outbox is an in-memory outbox: due deliveries by target, attempts that
// block until released, and what Complete recorded.
type outbox struct {
	mu        sync.Mutex
	due       []string // targets of due deliveries, in due order
	inFlight  map[string]int
	maxTotal  int
	maxTarget map[string]int
	claimers  map[string]bool
	recorded  int
	failOnce  atomic.Bool
	release   chan struct{}
	queued    chan struct{}
	conc      int
}

type task struct {
	o      *outbox
	target string
}

func (t task) Target() string { return t.target }
func (t task) Send(ctx context.Context) DeliveryOutcome {
	o := t.o
	o.mu.Lock()
	o.inFlight[t.target]++
	total := 0
	for _, n := range o.inFlight {
		total += n
	}
	o.maxTotal = max(o.maxTotal, total)
	o.maxTarget[t.target] = max(o.maxTarget[t.target], o.inFlight[t.target])
	o.mu.Unlock()
	select {
	case <-o.release:
	case <-ctx.Done():
	}
	o.mu.Lock()
	o.inFlight[t.target]--
	o.mu.Unlock()
	return t.target
}

func (o *outbox) Claim(ctx context.Context, claimer string, limit int, take func(string) bool) ([]DeliveryTask, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.claimers[claimer] = true
	var out []DeliveryTask
	var left []string
	for _, target := range o.due {
		if len(out) < limit && take(target) {
			out = append(out, task{o, target})
			continue
		}
		left = append(left, target)
	}
	o.due = left
	return out, nil
}

func (o *outbox) Complete(ctx context.Context, claimer string, outcomes []DeliveryOutcome) error {
	if o.failOnce.CompareAndSwap(true, false) {
		return errors.New("not now")
	}
	o.mu.Lock()
	o.recorded += len(outcomes)
	o.mu.Unlock()
	return nil
}

func (o *outbox) Prune(context.Context) error { return nil }
func (o *outbox) Concurrency() int            { return o.conc }
func (o *outbox) Queued() <-chan struct{}     { return o.queued }
func (o *outbox) snapshot() (total, slow, rec int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.maxTotal, o.maxTarget["slow"], o.recorded
}

// TestWebhookDispatcherBounds: attempts run concurrently up to the
// outbox's concurrency, one target never takes more than three quarters
// of the slots, every outcome is recorded (a refused Complete is tried
// again), and a new session claims under a new name.
func TestWebhookDispatcherBounds(t *testing.T) {
	o := &outbox{inFlight: map[string]int{}, maxTarget: map[string]int{}, claimers: map[string]bool{},
		release: make(chan struct{}), queued: make(chan struct{}, 1), conc: 8}
	for range 30 {
		o.due = append(o.due, "slow")
	}
	for range 4 {
		o.due = append(o.due, "fast")
	}
	o.failOnce.Store(true)
	d := &WebhookDispatcher{Outbox: o, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), NodeID: "n1", Interval: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	d.SetEnabled(ctx, true)
	waitFor(t, func() bool { total, slow, _ := o.snapshot(); return total == 8 && slow == 6 })
	time.Sleep(50 * time.Millisecond)
	if total, slow, _ := o.snapshot(); total != 8 || slow != 6 {
		t.Fatalf("in flight at most %d (want 8), %d for one target (want 6)", total, slow)
	}
	close(o.release)
	waitFor(t, func() bool { _, _, rec := o.snapshot(); return rec == 34 })
	cancel()
	d.SetEnabled(context.Background(), false)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	d.SetEnabled(ctx2, true)
	waitFor(t, func() bool { o.mu.Lock(); defer o.mu.Unlock(); return len(o.claimers) == 2 })
}
