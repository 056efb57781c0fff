package realtime

import "context"

// Delivery is the transport goroutine's side of a Conn: Next pulls the
// events after the connection's cursor, deliver filters them and renders
// the messages.
//
// Every committed batch wakes every connection at once, so the hub's lock
// is the one point all of them pass through right after a commit, and the
// state machine's observer needs it too before the next commit is
// answered. Next therefore takes it once per wake-up, not twice: when a
// batch brings the cursor to the ring's head, it keeps the wake channel of
// that moment (Conn.idle) and waits on it directly the next time instead
// of locking the hub only to learn that nothing is new. Whatever changes a
// connection's state signals one of the channels it waits on (the hub's
// wake for new events and a restore, kick for presences and credential
// rechecks, done when it ends), and every wait ends in the locked path,
// so nothing is taken without the lock. The events are copied out into a
// buffer the connection keeps, so the critical section allocates only
// when that buffer grows.
//
// (Reading the ring under a read lock instead was measured too, with
// BenchmarkFanout100 and the svcbench fanout-rate runs of
// docs/benchmarks.md: no gain beyond the noise of a shared machine, and
// the observer then waits for every reader in its critical section.)

// batchSize bounds the events taken from the ring under its lock at once.
const batchSize = 256

// Next blocks until there is something to send: queued notices, or events
// after the cursor that pass the subscriptions and the view rule. It
// returns ErrSlowConsumer (or the reason the connection ended) once the
// connection is failed, and ctx's error when ctx ends. One goroutine at a
// time calls it for a connection (its transport's).
//
// A connection whose credential a committed event may have changed (or
// that expired) rechecks it here, on its own goroutine, before it takes
// any further event; see recheckNow for what happens when it no longer
// holds (an unauthorized error message, or ErrUnauthorized).
func (c *Conn) Next(ctx context.Context) ([]Message, error) {
	h := c.hub
	for {
		if c.idle != nil {
			// Caught up at the last look: nothing is new until one of
			// these fires. ctx is checked in the locked path below, so
			// anything queued before it ended is still returned first.
			select {
			case <-c.idle:
			case <-c.kick:
			case <-c.done:
			case <-ctx.Done():
			}
			c.idle = nil
		}
		h.mu.Lock()
		if c.err != nil {
			err := c.err
			h.mu.Unlock()
			return nil, err
		}
		if c.recheck {
			c.recheck = false
			h.mu.Unlock()
			out, err := c.recheckNow(ctx)
			if err != nil {
				return nil, err
			}
			if len(out) > 0 {
				return out, nil
			}
			continue
		}
		if len(c.presQ) > 0 {
			out := c.presQ
			c.presQ = nil
			h.mu.Unlock()
			return out, nil
		}
		if !c.started {
			h.mu.Unlock()
			select {
			case <-c.startCh:
			case <-c.kick:
			case <-c.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		if len(c.notices) > 0 {
			out := c.notices
			c.notices = nil
			h.mu.Unlock()
			return out, nil
		}
		if c.pos+1 < h.first {
			h.failLocked(c, ErrSlowConsumer)
			h.mu.Unlock()
			return nil, ErrSlowConsumer
		}
		if c.pos < h.head {
			batch := c.takeLocked()
			h.mu.Unlock()
			if out := c.deliverBatch(batch); len(out) > 0 {
				return out, nil
			}
			continue
		}
		wake := h.wake
		h.mu.Unlock()
		select {
		case <-wake:
		case <-c.kick:
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// takeLocked copies the events after the cursor (at most batchSize) into
// the connection's buffer and moves the cursor past them; the hub's lock
// is held and the cursor is behind the head.
func (c *Conn) takeLocked() []*Event {
	h := c.hub
	from := c.pos + 1 - h.first
	n := min(uint64(len(h.ring))-from, batchSize)
	batch := append(c.batch[:0], h.ring[from:from+n]...)
	c.pos += n
	if c.pos == h.head {
		c.idle = h.wake
	}
	return batch
}

// deliverBatch is deliver, then it empties the buffer: the ring, not the
// buffer, keeps events alive.
func (c *Conn) deliverBatch(batch []*Event) []Message {
	out := c.deliver(batch)
	clear(batch)
	c.batch = batch[:0]
	return out
}

// deliver turns the events a subscription wants into messages.
func (c *Conn) deliver(batch []*Event) []Message {
	c.mu.Lock()
	p, subs := c.principal, c.subs
	c.mu.Unlock()
	var out []Message
	for _, ev := range batch {
		if c.skipping {
			if !idLess(c.skipI, c.skipS, ev.Index, ev.Seq) {
				continue
			}
			c.skipping = false
		}
		if ev.Flag != nil {
			// Flag changes are public (they name what changed, not its
			// rules); filters are about records and do not apply.
			for _, s := range subs {
				if s.t.matches(ev) {
					out = append(out, Message{Type: "flags", EventID: ev.ID(), Flag: ev.Flag})
					break
				}
			}
			continue
		}
		var view View
		for _, s := range subs {
			if !s.t.matches(ev) {
				continue
			}
			if view == nil {
				if view = c.hub.opts.Auth.View(p, ev.Change); view == nil {
					break
				}
			}
			if s.f != nil && !view.Match(s.f) {
				continue
			}
			if s.label != "" {
				out = append(out, labelled(ev, view, s.label))
				continue
			}
			m := Message{Type: ev.Action, EventID: ev.ID(), Collection: ev.Collection}
			if ev.Action == "delete" {
				m.ID = ev.RecordID
			} else {
				m = ev.frame(view, m)
			}
			out = append(out, m)
			break
		}
	}
	return out
}
