package suite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"svcd/jepsen/harness"
)

const (
	rtCollectionName = "rtitems"
	rtCollection     = `{"name":"rtitems","type":"base","fields":[{"name":"n","type":"number"}],
	"view_rule":"","create_rule":""}`
	// rtWritePause is each writer's pause between creates: with the
	// default six writers at most about 40 creates a second, so that a
	// subscriber's replay after an outage stays far below the server's
	// 1024-event lag limit (a slow_consumer drop is not a failure, but it
	// is not what the workload tests).
	rtWritePause = 150 * time.Millisecond
	// rtCatchUp bounds the wait, after the run, for the subscribers to
	// receive every acknowledged create.
	rtCatchUp = 45 * time.Second
)

// Realtime creates records through random nodes while subscribers (WS and
// SSE, PerNode on each node at the start) record every event; a
// subscriber whose stream breaks resumes on a random running node with the
// last event id it saw. At the end every subscriber's event ids must
// strictly increase across its reconnects, every create acknowledged after
// its first subscription must have reached it (unless it accepted a
// replay_window_exceeded, which must only come after an outage longer than
// Retention), and no event may name a record nobody created.
type Realtime struct {
	// PerNode subscribers on each node, alternately WebSocket and SSE.
	PerNode int
	// Retention is realtime.retention_sec for the run: longer than any
	// fault, so a clean run never exceeds the replay window.
	Retention time.Duration

	mu        sync.Mutex
	seq       map[int]int
	attempted map[string]bool
	acked     []rtWrite

	subs []*rtSubscriber
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// NewRealtime is the realtime workload: two subscribers per node, a
// 120 s replay window.
func NewRealtime() *Realtime {
	return &Realtime{PerNode: 2, Retention: 120 * time.Second, seq: map[int]int{}, attempted: map[string]bool{}}
}

func (r *Realtime) Name() string { return "realtime" }

func (r *Realtime) Setup(ctx context.Context, env *Env) error {
	if err := createCollection(ctx, env, rtCollection); err != nil {
		return err
	}
	if err := setSetting(ctx, env, "realtime.retention_sec", strconv.Itoa(int(r.Retention/time.Second))); err != nil {
		return err
	}
	pid0 := map[string]int{}
	for _, nd := range env.C.Running() {
		pid0[nd.Name] = nd.PID()
	}
	subCtx, stop := context.WithCancel(context.Background())
	r.stop = stop
	env.T.Cleanup(r.stopSubscribers)
	for i, nd := range env.C.Running() {
		for k := range r.PerNode {
			s := &rtSubscriber{
				transport: rtWS, coll: rtCollectionName, retention: r.Retention, env: env, first: nd, pid0: pid0,
				rand:  rand.New(rand.NewPCG(env.Opts.Seed, uint64(1000+i*r.PerNode+k))),
				ready: make(chan struct{}), seen: map[string]bool{},
			}
			s.name = fmt.Sprintf("s%d-ws@%s", len(r.subs)+1, nd.Name)
			if k%2 == 1 {
				s.transport = rtSSE
				s.name = fmt.Sprintf("s%d-sse@%s", len(r.subs)+1, nd.Name)
			}
			s.h.Name = s.name
			r.subs = append(r.subs, s)
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				s.run(subCtx)
			}()
		}
	}
	for _, s := range r.subs {
		select {
		case <-s.ready:
		case <-time.After(15 * time.Second):
			return fmt.Errorf("%s: not subscribed within 15 s", s.name)
		}
	}
	// A first create every subscriber must receive: from then on each has
	// an event id to resume from.
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	if o := r.create(ctx, env.C.Admin(l), "rtmarker0000000"); o != OK {
		return fmt.Errorf("the first create through %s: %s", l.Name, o)
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, s := range r.subs {
		for !s.has(r.ackedWrites()) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not receive the first create within 15 s", s.name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// create sends one create of record id through cl and records it.
func (r *Realtime) create(ctx context.Context, cl *harness.Client, id string) Outcome {
	r.mu.Lock()
	r.attempted[id] = true
	r.mu.Unlock()
	invoked := time.Now()
	resp, err := cl.Do(ctx, "POST", "/api/v1/"+rtCollectionName, map[string]any{"id": id, "n": invoked.UnixNano()})
	switch {
	case transient(status(resp), err):
		return Info
	case resp.Status == http.StatusCreated && resp.Index() > 0:
		r.mu.Lock()
		r.acked = append(r.acked, rtWrite{ID: id, Index: resp.Index(), Invoked: invoked})
		r.mu.Unlock()
		return OK
	}
	return Fail
}

func (r *Realtime) ackedWrites() []rtWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rtWrite(nil), r.acked...)
}

func (r *Realtime) Step(ctx context.Context, w *Worker) {
	nd := w.Node()
	if nd == nil {
		sleep(ctx, 20*time.Millisecond)
		return
	}
	r.mu.Lock()
	r.seq[w.ID]++
	id := fmt.Sprintf("rt%02d%011d", w.ID%100, r.seq[w.ID])
	r.mu.Unlock()
	// The write finishes even when the run ends meanwhile: one cut short
	// could still commit unseen.
	o := r.create(context.Background(), w.Client(nd), id)
	if o == Fail {
		w.Errorf("%s POST %s: refused (or answered without X-Svc-Index)", nd.Name, id)
	} else {
		w.Done("create", o)
	}
	sleep(ctx, rtWritePause)
}

func (r *Realtime) stopSubscribers() {
	if r.stop != nil {
		r.stop()
	}
	r.wg.Wait()
}

func (r *Realtime) Check(ctx context.Context, env *Env) Verdict {
	acked := r.ackedWrites()
	v := Verdict{Valid: true, Acknowledged: len(acked)}
	// The cluster has converged: every subscriber gets the rest now.
	start := time.Now()
	for _, s := range r.subs {
		for !s.has(acked) && time.Since(start) < rtCatchUp {
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // nothing more should come
	r.stopSubscribers()
	v.Notes = append(v.Notes, fmt.Sprintf("subscribers caught up %s after the cluster converged", time.Since(start).Round(time.Millisecond)))

	exists, err := r.records(ctx, env)
	if err != nil {
		v.Valid = false
		v.Notes = append(v.Notes, "final list: "+err.Error())
	}
	lost := 0
	for _, w := range acked {
		if exists != nil && !exists[w.ID] {
			lost++
		}
	}
	if lost > 0 {
		v.Valid = false
		v.Notes = append(v.Notes, fmt.Sprintf("%d acknowledged creates are not in the collection", lost))
	}
	subs := make([]rtHistory, len(r.subs))
	for i, s := range r.subs {
		subs[i] = s.history()
	}
	r.mu.Lock()
	attempted := r.attempted
	r.mu.Unlock()
	f, notes := checkRealtime(rtCollectionName, acked, attempted, exists, subs, r.Retention)
	v.Lost, v.Duplicates = f.Missing, f.Duplicates
	v.Valid = v.Valid && f.valid()
	v.Notes = append(v.Notes, "realtime: "+f.String())
	v.Notes = append(v.Notes, notes...)
	for _, h := range subs {
		v.Notes = append(v.Notes, fmt.Sprintf("%s: %d events, %d reconnects, %d window-exceeded, %d young-ring refusals",
			h.Name, len(h.Events), h.Reconnects, len(h.Exceeded), len(h.YoungRing)))
	}
	return v
}

// records are the ids the collection holds, read on a running node.
func (r *Realtime) records(ctx context.Context, env *Env) (map[string]bool, error) {
	nodes := env.C.Running()
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no node runs")
	}
	cl := env.C.Admin(nodes[0]).Strong()
	cl.Timeout = 30 * time.Second
	recs, err := harness.ListAll(ctx, cl, rtCollectionName, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(recs))
	for _, rec := range recs {
		out[rec.ID] = true
	}
	return out, nil
}

// setSetting sets one setting through the leader and waits until every
// running node has applied it.
func setSetting(ctx context.Context, env *Env, key, value string) error {
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	resp, err := env.C.Admin(l).Do(ctx, "PATCH", "/api/v1/admin/settings", map[string]any{key: value})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("set %s: %s", key, resp)
	}
	return waitAll(ctx, env, resp.Index())
}
