package jepsen_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"svcd/jepsen/harness"
)

// failoverProbe is the failover benchmark's one client: it writes one
// record at a time, each with a short timeout, to the node that answered
// last, and moves on to the next node after any failure (a refused
// connection, a timeout, an error status), as a client behind a list of
// addresses would.
type failoverProbe struct {
	nodes   []*harness.Node
	clients []*harness.Client

	mu       sync.Mutex
	attempts []probeAttempt
	inFlight context.CancelFunc
}

// probeAttempt is one write: where it went, when it was sent and answered,
// and whether it was acknowledged (201).
type probeAttempt struct {
	node       string
	start, end time.Time
	ok         bool
}

// newFailoverProbe prepares a probe over c's nodes; timeout bounds each
// request.
func newFailoverProbe(c *harness.Cluster, timeout time.Duration) *failoverProbe {
	p := &failoverProbe{nodes: c.Nodes()}
	for _, nd := range p.nodes {
		cl := c.Client(nd)
		cl.Timeout = timeout
		p.clients = append(p.clients, cl)
	}
	return p
}

// run writes until ctx ends.
func (p *failoverProbe) run(ctx context.Context, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xfa11))
	k := 0
	for i := 0; ctx.Err() == nil; i++ {
		rctx, cancel := context.WithCancel(ctx)
		p.mu.Lock()
		p.inFlight = cancel
		p.mu.Unlock()
		start := time.Now()
		resp, err := p.clients[k].Do(rctx, "POST", "/api/v1/items",
			map[string]any{"id": writeID(7, i, rng), "seq": i, "writer": "failover"})
		a := probeAttempt{node: p.nodes[k].Name, start: start, end: time.Now(), ok: err == nil && resp.Status == http.StatusCreated}
		cancel()
		p.mu.Lock()
		p.inFlight = nil
		p.attempts = append(p.attempts, a)
		p.mu.Unlock()
		if !a.ok {
			k = (k + 1) % len(p.clients)
			pause(ctx, 5*time.Millisecond)
		}
	}
}

// abort cancels the write in flight, if any (it counts as failed), so the
// next write is sent at once.
func (p *failoverProbe) abort() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inFlight != nil {
		p.inFlight()
	}
}

// firstAckAfter is the first acknowledged write sent at or after t0.
func (p *failoverProbe) firstAckAfter(t0 time.Time) (probeAttempt, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var best probeAttempt
	found := false
	for _, a := range p.attempts {
		if a.ok && !a.start.Before(t0) && (!found || a.end.Before(best.end)) {
			best, found = a, true
		}
	}
	return best, found
}

// trail describes the writes sent between from and until, relative to
// from (node, sent, answered, outcome), for reading an outlier.
func (p *failoverProbe) trail(from, until time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var parts []string
	for _, a := range p.attempts {
		if a.end.Before(from) || a.start.After(until) {
			continue
		}
		outcome := "failed"
		if a.ok {
			outcome = "ok"
		}
		parts = append(parts, fmt.Sprintf("%s %s..%s %s", a.node,
			a.start.Sub(from).Round(time.Millisecond), a.end.Sub(from).Round(time.Millisecond), outcome))
	}
	if len(parts) > 16 {
		parts = append(parts[:8], append([]string{"..."}, parts[len(parts)-8:]...)...)
	}
	return strings.Join(parts, ", ")
}

// acksSince counts the acknowledged writes sent at or after t0.
func (p *failoverProbe) acksSince(t0 time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.attempts {
		if a.ok && !a.start.Before(t0) {
			n++
		}
	}
	return n
}

// totals are the probe's acknowledged and failed writes.
func (p *failoverProbe) totals() (ok, failed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.attempts {
		if a.ok {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// leaderWatch polls every running node's view (term, role) ten times a
// second and keeps each rise of the highest term and each change of the
// node that reports itself leader, with the time it was seen.
type leaderWatch struct {
	c *harness.Cluster

	mu      sync.Mutex
	term    uint64
	leader  string
	changes []leaderChange
}

// leaderChange is one new term or new leader, as first seen.
type leaderChange struct {
	at     time.Time
	term   uint64
	leader string // empty for a new term not yet led
}

func (w *leaderWatch) run(ctx context.Context) {
	for ctx.Err() == nil {
		for _, nd := range w.c.Running() {
			pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			st, err := w.c.AdminState(pctx, nd, false)
			cancel()
			if err != nil {
				continue
			}
			w.observe(st)
		}
		pause(ctx, 100*time.Millisecond)
	}
}

func (w *leaderWatch) observe(st harness.State) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if st.Term > w.term {
		w.term = st.Term
		w.changes = append(w.changes, leaderChange{at: now, term: st.Term})
	}
	if st.State == "Leader" && st.Term == w.term && st.NodeID != w.leader {
		w.leader = st.NodeID
		w.changes = append(w.changes, leaderChange{at: now, term: st.Term, leader: st.NodeID})
	}
}

// current is the highest term seen so far.
func (w *leaderWatch) current() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.term
}

// outside returns the changes seen outside every window [from, to]: the
// terms and leaders no kill explains.
func (w *leaderWatch) outside(windows [][2]time.Time) []leaderChange {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []leaderChange
	for _, ch := range w.changes {
		in := false
		for _, win := range windows {
			if !ch.at.Before(win[0]) && !ch.at.After(win[1]) {
				in = true
				break
			}
		}
		if !in {
			out = append(out, ch)
		}
	}
	return out
}

// candidacies counts the elections the nodes' logs record a follower
// starting because its heartbeat timeout passed (pre-votes included).
func candidacies(c *harness.Cluster) int {
	n := 0
	for _, nd := range c.Nodes() {
		if b, err := nd.ReadLog(); err == nil {
			n += strings.Count(string(b), "heartbeat timeout reached, starting election")
		}
	}
	return n
}

// logTime is the time field of one of svcd's JSON log lines.
var logTime = regexp.MustCompile(`"time":"([^"]+)"`)

// electedAt is when nd last logged taking leadership (svcd's leader loop
// notices within its 50 ms poll), or the zero time.
func electedAt(nd *harness.Node) time.Time {
	b, err := nd.ReadLog()
	if err != nil {
		return time.Time{}
	}
	i := bytes.LastIndex(b, []byte("leadership acquired"))
	if i < 0 {
		return time.Time{}
	}
	line := b[bytes.LastIndexByte(b[:i], '\n')+1:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	m := logTime.FindSubmatch(line)
	if m == nil {
		return time.Time{}
	}
	at, _ := time.Parse(time.RFC3339Nano, string(m[1]))
	return at
}
