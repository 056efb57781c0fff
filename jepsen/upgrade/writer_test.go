package upgrade_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"svcd/jepsen/harness"
)

// collection is what the writers write: anyone may create, update and
// view, so only the write path is under test.
const collection = `{"name":"items","type":"base","fields":[` +
	`{"name":"seq","type":"number","required":true},{"name":"writer","type":"text"}],` +
	`"view_rule":"","create_rule":"","update_rule":""}`

// writeDeadline bounds one write with its retries: a node restarts in a
// few seconds, so a write that finds no node to take it for this long is
// a failure.
const writeDeadline = 45 * time.Second

// tally counts what the writers saw; every field but the acknowledged
// writes is a retry a client makes.
type tally struct {
	creates, updates int // acknowledged
	unavailable      int // 503 answers (retried on the next node)
	refused          int // connection refused: the node is down (retried)
	lost             int // no answer after the request was sent (retried: every write is idempotent)
	failures         []string
}

// writers are clients that keep writing through every node of a cluster
// until stopped: each creates records with ids it chooses and updates its
// own records (seq set to a new value), one request at a time, sending
// each request to the next node in turn. A 503, a refused connection or a
// request that got no answer is retried on the next node (a create retried
// after it landed answers 422 for the id, which counts as its
// acknowledgement); any other answer is a failure.
type writers struct {
	c      *harness.Cluster
	nodes  []*harness.Node
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	t     tally
	acked map[string]int // record id -> last acknowledged seq
}

func startWriters(c *harness.Cluster, n int) *writers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &writers{c: c, nodes: c.Nodes(), cancel: cancel, acked: map[string]int{}}
	for i := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.run(ctx, i)
		}()
	}
	return w
}

// stop ends the writers after their current write and returns the tally.
func (w *writers) stop() tally {
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t
}

// snapshot returns the tally so far.
func (w *writers) snapshot() tally {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.t
	t.failures = append([]string(nil), w.t.failures...)
	return t
}

func (w *writers) ackedCopy() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.acked))
	for k, v := range w.acked {
		out[k] = v
	}
	return out
}

func (w *writers) run(ctx context.Context, id int) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	var own []string
	next := id // the node the next request goes to
	for seq := 1; ctx.Err() == nil; seq++ {
		var method, path, rec string
		var body map[string]any
		if len(own) > 0 && rng.IntN(10) < 4 {
			rec = own[rng.IntN(len(own))]
			method, path = "PATCH", "/api/v1/items/"+rec
			body = map[string]any{"seq": seq}
		} else {
			rec = fmt.Sprintf("w%02d%012d", id, seq)
			method, path = "POST", "/api/v1/items"
			body = map[string]any{"id": rec, "seq": seq, "writer": fmt.Sprint(id)}
		}
		ok := w.write(&next, method, path, rec, body)
		if !ok {
			continue
		}
		w.mu.Lock()
		w.acked[rec] = seq
		if method == "POST" {
			w.t.creates++
			own = append(own, rec)
		} else {
			w.t.updates++
		}
		w.mu.Unlock()
	}
}

// write sends one write until a node acknowledges it, retrying 503s,
// refused connections and lost answers on the next node. It reports
// whether the write was acknowledged (false: a failure, recorded). A
// write begun is settled even when the writers are being stopped.
func (w *writers) write(next *int, method, path, rec string, body any) bool {
	deadline := time.Now().Add(writeDeadline)
	retried := false
	for {
		nd := w.nodes[*next%len(w.nodes)]
		*next++
		cl := w.c.Client(nd)
		cl.Timeout = 10 * time.Second
		resp, err := cl.Do(context.Background(), method, path, body)
		switch {
		case err != nil && errors.Is(err, syscall.ECONNREFUSED):
			w.count(func(t *tally) { t.refused++ })
		case err != nil:
			w.count(func(t *tally) { t.lost++ })
		case resp.Status == http.StatusOK || resp.Status == http.StatusCreated:
			return true
		case resp.Status == http.StatusServiceUnavailable:
			w.count(func(t *tally) { t.unavailable++ })
		case retried && method == "POST" && resp.Status == http.StatusUnprocessableEntity &&
			strings.Contains(string(resp.Body), "a record with this id already exists"):
			// An earlier try of this create landed.
			return true
		default:
			w.fail(fmt.Sprintf("%s %s via %s: %s", method, path, nd.Name, resp))
			return false
		}
		retried = true
		if time.Now().After(deadline) {
			w.fail(fmt.Sprintf("%s %s (record %s): no node acknowledged it within %s", method, path, rec, writeDeadline))
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *writers) count(f func(*tally)) {
	w.mu.Lock()
	f(&w.t)
	w.mu.Unlock()
}

func (w *writers) fail(msg string) {
	w.mu.Lock()
	w.t.failures = append(w.t.failures, msg)
	w.mu.Unlock()
}
