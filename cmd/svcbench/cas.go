package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// casRecordsPerClient bounds the records each cas client updates (and so
// the ETags fetched before the run).
const casRecordsPerClient = 100

// casClient is one cas worker's records and the ETag it last saw of each.
// Only its own worker touches it.
type casClient struct {
	ids     []string
	etags   []string
	next    int // record of the next request
	pending int // record of the request in flight
}

// casLoad is the cas scenario: each client updates its own records in
// turn, with If-Match set to the ETag of the record's last answer. Nobody
// else writes them, so every update should succeed; a 412 (counted apart
// from errors) carries the current ETag, which the next update of that
// record uses.
type casLoad struct {
	nodes   targets
	coll    string
	clients []casClient // indexed by worker id
}

// newCASLoad deals the records out to env.clients clients (at most
// casRecordsPerClient each) and fetches their current ETags.
func newCASLoad(ctx context.Context, env scenarioEnv) (*casLoad, error) {
	if len(env.ids) < env.clients {
		return nil, fmt.Errorf("cas: %d records for %d clients; raise --seed-rows", len(env.ids), env.clients)
	}
	n := min(len(env.ids), env.clients*casRecordsPerClient)
	ids := env.ids[:n]
	fmt.Fprintf(env.log, "cas: fetching the ETags of %d records\n", n)
	start := time.Now()
	etags := make([]string, n)
	err := forEach(ctx, n, env.clients, func(ctx context.Context, _, k int) error {
		tag, err := env.api.etag(ctx, env.coll, ids[k])
		if err != nil {
			return fmt.Errorf("cas: ETag of record %s: %w", ids[k], err)
		}
		etags[k] = tag
		return nil
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(env.log, "cas: fetched %d ETags in %.1fs\n", n, time.Since(start).Seconds())
	c := &casLoad{nodes: env.nodes, coll: env.coll, clients: make([]casClient, env.clients)}
	for k := range n {
		cc := &c.clients[k%env.clients]
		cc.ids = append(cc.ids, ids[k])
		cc.etags = append(cc.etags, etags[k])
	}
	return c, nil
}

func (c *casLoad) load() load { return load{next: c.next, seen: c.seen} }

// next sends a conditional update of the worker's next record.
func (c *casLoad) next(ctx context.Context, w *worker) (*http.Request, error) {
	cc := &c.clients[w.id]
	i := cc.next
	cc.next = (i + 1) % len(cc.ids)
	cc.pending = i
	body := titleBody(make([]byte, 0, 48), "cas", w.id, w.seq)
	w.seq++
	return patchRequest(ctx, c.nodes.bases[c.nodes.pick(w)], c.coll, cc.ids[i], body, cc.etags[i])
}

// seen keeps the ETag of a successful update, or the current one a 412
// returns.
func (c *casLoad) seen(w *worker, status int, h http.Header) {
	if status != http.StatusOK && status != http.StatusPreconditionFailed {
		return
	}
	if tag := h.Get("ETag"); tag != "" {
		cc := &c.clients[w.id]
		cc.etags[cc.pending] = tag
	}
}
