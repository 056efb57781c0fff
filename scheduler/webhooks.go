package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"
)

// WebhookOutbox is the outbox of webhook deliveries as the dispatcher
// drives it (engine/webhooks, adapted by the composition root).
type WebhookOutbox interface {
	// Claim claims, through the log, up to limit due deliveries for
	// claimer (this leadership session), asking take of each candidate's
	// target, in due order, whether there is room for it.
	Claim(ctx context.Context, claimer string, limit int, take func(target string) bool) ([]DeliveryTask, error)
	// Complete records, through the log, the outcomes of claimer's
	// attempts.
	Complete(ctx context.Context, claimer string, outcomes []DeliveryOutcome) error
	// Prune drops finished deliveries past their retention.
	Prune(ctx context.Context) error
	// Concurrency is the most attempts in flight at once (a setting).
	Concurrency() int
	// Queued is signalled when committed commands queued deliveries.
	Queued() <-chan struct{}
}

// DeliveryTask is one claimed delivery.
type DeliveryTask interface {
	// Target names the receiver (the webhook): the dispatcher keeps one
	// slow target from taking every slot.
	Target() string
	// Send makes the attempt; it ends when ctx does.
	Send(ctx context.Context) DeliveryOutcome
}

// DeliveryOutcome is what an attempt came to; only the outbox reads it.
type DeliveryOutcome any

// Defaults of the dispatcher (SPEC.md: a tick every 2 seconds, up to 50
// deliveries claimed per tick).
const (
	DefaultWebhookInterval = 2 * time.Second
	DefaultWebhookBatch    = 50
	defaultPruneEvery      = time.Hour
	maxCompleteBatch       = 200
)

// WebhookDispatcher sends webhook deliveries while this node leads. Every
// Interval, and at once when a committed command queued deliveries or a
// slot frees up while more are due, it claims up to Batch due deliveries
// (never more than the free slots of the outbox's concurrency, and never
// so many for one target that it holds every slot: a target gets at most
// three quarters of them) and starts their attempts without waiting for
// them: one slow receiver does not hold up the tick. Outcomes are
// recorded in batches as attempts end. Each leadership gets a new claimer
// name, so a new leader takes over at once what an old one left claimed.
type WebhookDispatcher struct {
	Outbox WebhookOutbox
	Log    *slog.Logger
	// NodeID starts the claimer names (for the operator reading them).
	NodeID string
	// Interval between ticks (0: DefaultWebhookInterval); Batch, the most
	// deliveries claimed per tick (0: DefaultWebhookBatch).
	Interval time.Duration
	Batch    int
}

// Name implements Subsystem.
func (d *WebhookDispatcher) Name() string { return "webhooks" }

// SetEnabled implements Subsystem: enabling starts a session that runs
// until ctx ends (leadership lost, or the node stops).
func (d *WebhookDispatcher) SetEnabled(ctx context.Context, enabled bool) {
	if !enabled {
		return
	}
	var b [6]byte
	rand.Read(b[:])
	s := &dispatchSession{
		d: d, claimer: d.NodeID + "/" + hex.EncodeToString(b[:]), byTarget: map[string]int{},
		done: make(chan struct{}, 1), freed: make(chan struct{}, 1),
	}
	go s.run(ctx)
}

// dispatchSession is one leadership's dispatching.
type dispatchSession struct {
	d       *WebhookDispatcher
	claimer string

	mu       sync.Mutex
	total    int            // attempts in flight
	byTarget map[string]int // attempts in flight per target
	results  []DeliveryOutcome
	sends    sync.WaitGroup

	done  chan struct{} // an attempt ended: outcomes to record
	freed chan struct{} // a slot freed up
}

func (s *dispatchSession) run(ctx context.Context) {
	interval := s.d.Interval
	if interval <= 0 {
		interval = DefaultWebhookInterval
	}
	s.d.Log.Info("webhook dispatcher started", "claimer", s.claimer)
	var recorder sync.WaitGroup
	recorder.Add(1)
	go func() { defer recorder.Done(); s.record(ctx) }()
	tick := time.NewTicker(interval)
	prune := time.NewTicker(defaultPruneEvery)
	defer func() {
		tick.Stop()
		prune.Stop()
		s.sends.Wait()
		recorder.Wait()
		s.d.Log.Info("webhook dispatcher stopped", "claimer", s.claimer)
	}()
	s.prune(ctx)
	for {
		again, more := s.tick(ctx)
		if again && ctx.Err() == nil {
			continue
		}
		var freed <-chan struct{}
		if more {
			freed = s.freed
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.d.Outbox.Queued():
		case <-freed:
		case <-prune.C:
			s.prune(ctx)
		}
	}
}

// tick claims what there is room for and starts the attempts. It reports
// again when it took a full batch and slots are still free (look again at
// once), and more when more may be due than it took (the next slot that
// frees up is worth another look).
func (s *dispatchSession) tick(ctx context.Context) (again, more bool) {
	batch := s.d.Batch
	if batch <= 0 {
		batch = DefaultWebhookBatch
	}
	slots := max(s.d.Outbox.Concurrency(), 1)
	perTarget := max(slots-slots/4, 1)
	s.mu.Lock()
	free := slots - s.total
	s.mu.Unlock()
	if free <= 0 {
		return false, true
	}
	limit := min(batch, free)
	taken := map[string]int{}
	refused := false
	take := func(target string) bool {
		s.mu.Lock()
		busy := s.byTarget[target]
		s.mu.Unlock()
		if busy+taken[target] >= perTarget {
			refused = true
			return false
		}
		taken[target]++
		return true
	}
	tasks, err := s.d.Outbox.Claim(ctx, s.claimer, limit, take)
	if err != nil {
		if ctx.Err() == nil {
			s.d.Log.Warn("webhook deliveries could not be claimed", "err", err)
		}
		return false, false
	}
	for _, t := range tasks {
		s.start(ctx, t)
	}
	full := len(tasks) == limit
	return full && limit == batch && free > limit, refused || full
}

// start runs one attempt in its own goroutine.
func (s *dispatchSession) start(ctx context.Context, t DeliveryTask) {
	target := t.Target()
	s.mu.Lock()
	s.total++
	s.byTarget[target]++
	s.mu.Unlock()
	s.sends.Add(1)
	go func() {
		defer s.sends.Done()
		out := t.Send(ctx)
		s.mu.Lock()
		s.total--
		if s.byTarget[target]--; s.byTarget[target] <= 0 {
			delete(s.byTarget, target)
		}
		s.results = append(s.results, out)
		s.mu.Unlock()
		signal(s.done)
		signal(s.freed)
	}()
}

// record records outcomes as attempts end, in batches; a batch the log
// refused is tried again while the session lasts.
func (s *dispatchSession) record(ctx context.Context) {
	wait := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
		}
		for {
			s.mu.Lock()
			n := min(len(s.results), maxCompleteBatch)
			batch := append([]DeliveryOutcome(nil), s.results[:n]...)
			s.results = s.results[n:]
			s.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			if err := s.d.Outbox.Complete(ctx, s.claimer, batch); err != nil {
				if ctx.Err() != nil {
					return
				}
				s.d.Log.Warn("webhook outcomes could not be recorded; retrying", "count", len(batch), "err", err)
				s.mu.Lock()
				s.results = append(batch, s.results...)
				s.mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				wait = min(wait*2, 5*time.Second)
				continue
			}
			wait = 100 * time.Millisecond
		}
	}
}

func (s *dispatchSession) prune(ctx context.Context) {
	if err := s.d.Outbox.Prune(ctx); err != nil && ctx.Err() == nil {
		s.d.Log.Warn("finished webhook deliveries could not be pruned", "err", err)
	}
}

// signal wakes a channel of capacity one without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
