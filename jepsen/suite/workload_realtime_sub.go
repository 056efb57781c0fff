package suite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"svcd/jepsen/harness"
)

// rtSubscriber is one realtime client of the workload: it subscribes to
// the collection on a node, records every event, and when the stream
// breaks (the node killed, stopped, cut off, or the subscriber dropped)
// resumes on a random running node after the last event it saw.
type rtSubscriber struct {
	name      string
	transport rtTransport
	coll      string
	retention time.Duration
	env       *Env
	rand      *rand.Rand // its goroutine only
	first     *harness.Node
	// pid0 is every node's process at the start: a node whose process
	// changed since (or that joined later) has a young replay ring.
	pid0  map[string]int
	ready chan struct{} // closed once the first subscription is in effect

	mu       sync.Mutex
	h        rtHistory
	last     string // the last event id received
	lastIdx  uint64
	lastRecv time.Time
	seen     map[string]bool
}

// rtSession is one connection's state.
type rtSession struct {
	node       *harness.Node
	lastChance bool // every other running node already refused the id
	subscribed bool
	retry      bool // refused within retention: try another node
}

func (s *rtSubscriber) run(ctx context.Context) {
	nd := s.first
	tried := map[string]bool{}
	lastChance := false
	for ctx.Err() == nil {
		if nd == nil {
			sleep(ctx, 100*time.Millisecond)
			nd, lastChance = s.pick(tried)
			continue
		}
		sess := &rtSession{node: nd, lastChance: lastChance}
		s.mu.Lock()
		lastID := s.last
		s.mu.Unlock()
		err := s.transport(ctx, nd.URL(), s.coll, lastID, func(m rtMsg) error { return s.handle(sess, m) })
		if ctx.Err() != nil {
			return
		}
		switch {
		case sess.retry:
			tried[nd.Name] = true
		case sess.subscribed:
			clear(tried)
			tried[nd.Name] = true // the node it just lost: another one first
		default:
			tried[nd.Name] = true // could not subscribe there
			s.env.T.Logf("%s realtime %s: %s: %v", time.Now().Format("15:04:05.000"), s.name, nd.Name, err)
		}
		nd, lastChance = s.pick(tried)
		switch {
		case sess.subscribed:
			sleep(ctx, 50*time.Millisecond)
		case !sess.retry:
			sleep(ctx, 200*time.Millisecond) // no node answers: do not spin
		}
	}
}

// pick is a random running node not in tried; when every running node is
// in tried it forgets them and reports it (the last chance: a refusal is
// then accepted).
func (s *rtSubscriber) pick(tried map[string]bool) (*harness.Node, bool) {
	running := s.env.C.Running()
	var fresh []*harness.Node
	for _, nd := range running {
		if !tried[nd.Name] {
			fresh = append(fresh, nd)
		}
	}
	if len(fresh) > 0 {
		return fresh[s.rand.IntN(len(fresh))], false
	}
	if len(running) == 0 {
		return nil, false
	}
	clear(tried)
	return running[s.rand.IntN(len(running))], true
}

// restarted reports whether nd's process is not the one it ran at the
// start of the run.
func (s *rtSubscriber) restarted(nd *harness.Node) bool {
	pid, ok := s.pid0[nd.Name]
	return !ok || pid != nd.PID()
}

// handle records one message of sess; an error ends the connection.
func (s *rtSubscriber) handle(sess *rtSession, m rtMsg) error {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Type {
	case "subscribed":
		if sess.subscribed {
			return nil
		}
		sess.subscribed = true
		if s.h.Start.IsZero() {
			s.h.Start, s.lastRecv = now, now
			close(s.ready)
		} else {
			s.h.Reconnects++
		}
	case "create", "update", "delete":
		if m.frameID != "" && m.frameID != m.EventID {
			s.h.Problems = append(s.h.Problems, fmt.Sprintf("%s: frame id %q carries eventId %q", sess.node.Name, m.frameID, m.EventID))
		}
		idx, seq, ok := ParseEventID(m.EventID)
		if !ok {
			s.h.Problems = append(s.h.Problems, fmt.Sprintf("%s: malformed event id %q", sess.node.Name, m.EventID))
			return nil
		}
		ev := rtEventRec{ID: m.EventID, Index: idx, Seq: seq, Type: m.Type, Collection: m.Collection, Node: sess.node.Name, Record: m.ID}
		if m.Record != nil {
			ev.Record = m.Record.ID
		}
		s.h.Events = append(s.h.Events, ev)
		s.last, s.lastIdx, s.lastRecv = m.EventID, idx, now
		s.seen[ev.Record] = true
	case "error":
		switch m.Code {
		case "replay_window_exceeded":
			outage := now.Sub(s.lastRecv)
			if outage <= s.retention && !sess.lastChance {
				// A ring younger than the events asked for: a node
				// restarted (or added) since. Another node may have them.
				what := fmt.Sprintf("%s refused Last-Event-ID %s after %s without events", sess.node.Name, s.last, outage.Round(time.Millisecond))
				if s.restarted(sess.node) {
					s.h.YoungRing = append(s.h.YoungRing, what)
				} else {
					s.h.BadRefusals = append(s.h.BadRefusals, what+", and it never restarted")
				}
				sess.retry = true
				return errRTStop
			}
			s.h.Exceeded = append(s.h.Exceeded, rtExceeded{At: now, After: s.lastIdx, Outage: outage, Node: sess.node.Name})
		case "slow_consumer":
			s.h.Slow++
		default:
			s.h.Problems = append(s.h.Problems, fmt.Sprintf("%s: error %s: %s", sess.node.Name, m.Code, m.Message))
		}
	}
	return nil
}

// history is a copy of what the subscriber saw so far.
func (s *rtSubscriber) history() rtHistory {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.h
	h.Events = append([]rtEventRec(nil), s.h.Events...)
	h.Exceeded = append([]rtExceeded(nil), s.h.Exceeded...)
	h.YoungRing = append([]string(nil), s.h.YoungRing...)
	h.BadRefusals = append([]string(nil), s.h.BadRefusals...)
	h.Problems = append([]string(nil), s.h.Problems...)
	return h
}

// has reports whether every write in ws that the subscriber must get has
// reached it.
func (s *rtSubscriber) has(ws []rtWrite) bool {
	h := s.history()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range ws {
		if !s.seen[w.ID] && rtRequired(h, w) {
			return false
		}
	}
	return true
}
