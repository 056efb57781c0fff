package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// fanoutOpeners is how many subscriptions are being opened at once.
const fanoutOpeners = 64

// receipt is when a subscriber got the create event of a record.
type receipt struct {
	id string
	at time.Time
}

// subscriber reads one stream in its own goroutine and counts the create
// events of the collection; with keep set it also records each receipt.
type subscriber struct {
	stream eventStream
	keep   bool
	stamps bool // record the delay of every stamped create (fanout-rate)
	done   chan struct{}

	creates  atomic.Int64 // create events of the collection
	inWindow atomic.Int64 // of them, received inside the pool's window

	mu       sync.Mutex
	receipts []receipt
	delays   []time.Duration // stamps: send-to-receipt delay per create
	err      error           // why the stream ended (nil while open or when closed by us)
}

// subPool is the open subscriptions of one scenario.
type subPool struct {
	subs    []*subscriber
	coll    string
	closing atomic.Bool
	// window counts, per subscriber, the events received between these
	// instants (unix nanoseconds; 0 = no window).
	winStart, winEnd atomic.Int64
}

// openSubscribers opens n subscriptions to coll, subscriber i on node
// bases[i mod len(bases)], fanoutOpeners at a time, and starts their
// readers. On any failure every stream opened so far is closed.
func openSubscribers(ctx context.Context, dial dialer, bases []string, coll string, n int, keep, stamps bool, log io.Writer) (*subPool, error) {
	p := &subPool{coll: coll, subs: make([]*subscriber, n)}
	var (
		next     atomic.Int64
		opened   atomic.Int64
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(fanoutOpeners, n) {
		wg.Go(func() {
			for octx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				dctx, dcancel := context.WithTimeout(octx, 30*time.Second)
				s, err := dial(dctx, bases[i%len(bases)], coll)
				dcancel()
				if err != nil {
					errOnce.Do(func() {
						firstErr = fmt.Errorf("opening subscription %d of %d: %w", i+1, n, err)
						cancel()
					})
					return
				}
				p.subs[i] = &subscriber{stream: s, keep: keep, stamps: stamps, done: make(chan struct{})}
				go p.read(ctx, p.subs[i])
				if k := opened.Add(1); k%2000 == 0 && int(k) < n {
					fmt.Fprintf(log, "  %d subscriptions open\n", k)
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		p.close()
		return nil, firstErr
	}
	return p, nil
}

// read is the reader of one subscriber.
func (p *subPool) read(ctx context.Context, s *subscriber) {
	defer close(s.done)
	for {
		ev, err := s.stream.next(ctx)
		now := time.Now()
		if err == nil && ev.Type == "error" {
			err = fmt.Errorf("server error %s: %s", ev.Code, ev.Message)
		}
		if err != nil {
			if !p.closing.Load() {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
			}
			return
		}
		if ev.Type != "create" || ev.Collection != p.coll {
			continue
		}
		s.creates.Add(1)
		if start := p.winStart.Load(); start != 0 && now.UnixNano() >= start && now.UnixNano() <= p.winEnd.Load() {
			s.inWindow.Add(1)
		}
		if s.stamps {
			if d, ok := deliveryDelay(ev, now); ok {
				s.mu.Lock()
				s.delays = append(s.delays, d)
				s.mu.Unlock()
			}
		}
		if s.keep {
			s.mu.Lock()
			s.receipts = append(s.receipts, receipt{id: ev.Record.ID, at: now})
			s.mu.Unlock()
		}
	}
}

// waitCreates waits until every open subscriber has seen want create events
// (or its stream ended), or until timeout.
func (p *subPool) waitCreates(ctx context.Context, want int64, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		behind := false
		for _, s := range p.subs {
			select {
			case <-s.done:
				continue
			default:
			}
			if s.creates.Load() < want {
				behind = true
				break
			}
		}
		if !behind {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dropped counts the subscribers whose stream ended, with the first reason.
func (p *subPool) dropped() (n int, first error) {
	for _, s := range p.subs {
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		if err != nil {
			n++
			if first == nil {
				first = err
			}
		}
	}
	return n, first
}

// close ends every stream and waits for the readers.
func (p *subPool) close() {
	p.closing.Store(true)
	for _, s := range p.subs {
		if s != nil {
			s.stream.close()
		}
	}
	for _, s := range p.subs {
		if s != nil {
			<-s.done
		}
	}
}
