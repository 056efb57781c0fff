package main

import (
	"context"
	"net/http"
	"time"
)

// Delivery latency under load (fanout-rate): each create the writers send
// carries its send time, in Unix microseconds, in the record's number
// field n. A subscriber that receives the create event takes the delay
// from that instant to the event's receipt, so no per-record matching
// between writers and subscribers is needed and every delivery of every
// committed create is a sample.

// stampedCreateLoad is the create load of fanout-rate: recordBody with n
// the send time in Unix microseconds (exact in a JSON number), taken as
// the request is built, just before it is sent.
func stampedCreateLoad(env scenarioEnv) load {
	nodes, coll := env.nodes, env.coll
	return load{next: func(ctx context.Context, w *worker) (*http.Request, error) {
		body := recordBodyN(make([]byte, 0, 80), w.id, w.seq, time.Now().UnixMicro())
		w.seq++
		return createRequest(ctx, nodes.bases[nodes.pick(w)], coll, body)
	}}
}

// deliveryDelay is the delay from a stamped create's send time to its
// receipt at; ok is false for an event without a stamp.
func deliveryDelay(ev rtEvent, at time.Time) (time.Duration, bool) {
	if ev.Record.N <= 0 {
		return 0, false
	}
	return at.Sub(time.UnixMicro(int64(ev.Record.N))), true
}

// deliveryLatencies merges the delays every subscriber recorded.
func (p *subPool) deliveryLatencies() []time.Duration {
	var all []time.Duration
	for _, s := range p.subs {
		s.mu.Lock()
		all = append(all, s.delays...)
		s.mu.Unlock()
	}
	return all
}
