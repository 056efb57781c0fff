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
	// wakeDelay is how long the dispatcher gathers freshly queued
	// deliveries before it claims them.
	wakeDelay = 100 * time.Millisecond
)

// WebhookDispatcher sends webhook deliveries while this node leads. Every
// Interval, 100 ms after a committed command queued deliveries, and when
// its queue runs low while more are due, it claims up to Batch due
// deliveries and starts their attempts without waiting for them, up to
// the outbox's concurrency at once: one slow receiver does not hold up
// the tick. It holds at most as many claimed deliveries waiting for a
// slot as there are slots, so a slot that frees up is used at once,
// without a claim (a round through the log) each. One target never has
// more than three quarters of the slots (and of the waiting places).
// Outcomes are recorded in batches as attempts end. Each leadership gets
// a new claimer name, so a new leader takes over at once what an old one
// left claimed.
type WebhookDispatcher struct {
	Outbox WebhookOutbox
	Log    *slog.Logger
	// NodeID starts the claimer names (for the operator reading them).
	NodeID string
	// Lead, when set, is asked before each claim: a node that stopped
	// leading does not claim (its commands would be forwarded to the new
	// leader and take deliveries over from it) in the moments before its
	// session ends. Outcomes are still recorded.
	Lead Leadership
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
		d: d, claimer: d.NodeID + "/" + hex.EncodeToString(b[:]), running: map[string]int{}, held: map[string]int{},
		done: make(chan struct{}, 1), low: make(chan struct{}, 1),
	}
	go s.run(ctx)
}

// dispatchSession is one leadership's dispatching.
type dispatchSession struct {
	d       *WebhookDispatcher
	claimer string

	mu      sync.Mutex
	total   int            // attempts in flight
	running map[string]int // attempts in flight per target
	held    map[string]int // claimed deliveries (in flight or waiting) per target
	waiting []DeliveryTask // claimed, waiting for a slot
	results []DeliveryOutcome
	sends   sync.WaitGroup

	done chan struct{} // an attempt ended: outcomes to record
	low  chan struct{} // the waiting queue ran low
}

// limits are the slots (attempts in flight) and a target's share of them.
func (s *dispatchSession) limits() (slots, perTarget int) {
	slots = max(s.d.Outbox.Concurrency(), 1)
	return slots, max(slots-slots/4, 1)
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
		var low <-chan struct{}
		if more {
			low = s.low
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.d.Outbox.Queued():
			// Let the changes committing meanwhile queue theirs too: one
			// claim for many of them, not one each.
			sleep(ctx, min(wakeDelay, interval))
		case <-low:
		case <-prune.C:
			s.prune(ctx)
		}
	}
}

// tick claims what there is room for (free slots, and as many waiting
// places) and starts what it can. It reports again when it took a full
// batch and there is room still (look again at once), and more when more
// may be due than it took (worth a look when the queue runs low).
func (s *dispatchSession) tick(ctx context.Context) (again, more bool) {
	batch := s.d.Batch
	if batch <= 0 {
		batch = DefaultWebhookBatch
	}
	if s.d.Lead != nil && !s.d.Lead.IsLeader() {
		return false, false
	}
	slots, perTarget := s.limits()
	s.mu.Lock()
	room := 2*slots - s.total - len(s.waiting)
	s.mu.Unlock()
	if room <= 0 {
		return false, true
	}
	limit := min(batch, room)
	taken := map[string]int{}
	refused := false
	take := func(target string) bool {
		s.mu.Lock()
		held := s.held[target]
		s.mu.Unlock()
		if held+taken[target] >= 2*perTarget {
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
	s.mu.Lock()
	for _, t := range tasks {
		s.held[t.Target()]++
	}
	s.waiting = append(s.waiting, tasks...)
	s.mu.Unlock()
	s.pump(ctx)
	full := len(tasks) == limit
	return full && limit == batch && room > limit, refused || full
}

// pump starts the waiting attempts that fit: a free slot, and their
// target under its share.
func (s *dispatchSession) pump(ctx context.Context) {
	slots, perTarget := s.limits()
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.waiting[:0]
	for _, t := range s.waiting {
		target := t.Target()
		if s.total >= slots || s.running[target] >= perTarget {
			kept = append(kept, t)
			continue
		}
		s.total++
		s.running[target]++
		s.sends.Add(1)
		go s.send(ctx, t)
	}
	clear(s.waiting[len(kept):])
	s.waiting = kept
	if len(s.waiting) <= slots/2 {
		signal(s.low)
	}
}

// send makes one attempt, then frees its slot for the next.
func (s *dispatchSession) send(ctx context.Context, t DeliveryTask) {
	defer s.sends.Done()
	out := t.Send(ctx)
	target := t.Target()
	s.mu.Lock()
	s.total--
	if s.running[target]--; s.running[target] <= 0 {
		delete(s.running, target)
	}
	if s.held[target]--; s.held[target] <= 0 {
		delete(s.held, target)
	}
	s.results = append(s.results, out)
	s.mu.Unlock()
	signal(s.done)
	if ctx.Err() == nil {
		s.pump(ctx)
	}
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

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// signal wakes a channel of capacity one without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
