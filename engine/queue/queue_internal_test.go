package queue

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"svcd/engine"
	"svcd/fsm/fsmtest"
)

// qclock is the engine's clock in these tests: it moves only when told.
type qclock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *qclock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *qclock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type env struct {
	t   *testing.T
	e   *engine.Engine
	q   *Queue
	clk *qclock
	ctx context.Context
}

// newEnv is the module on a real store, commands applied as a one-node
// log would, at a clock standing on a whole minute.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, Options{})
}

// newEnvWith is newEnv with the module's options.
func newEnvWith(t *testing.T, opts Options) *env {
	t.Helper()
	store := fsmtest.Open(t)
	clk := &qclock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	e, err := engine.New(engine.Options{Store: store, Clock: clk.now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	q := New(e, opts)
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	e.SetProposer(&fsmtest.Log{S: store})
	ev := &env{t: t, e: e, q: q, clk: clk, ctx: context.Background()}
	ev.ok(e.Migrate(ev.ctx))
	return ev
}

func (v *env) ok(err error) {
	v.t.Helper()
	if err != nil {
		v.t.Fatal(err)
	}
}

func (v *env) job(queue, id string) *Job {
	v.t.Helper()
	j, err := v.q.GetJob(v.ctx, queue, id)
	v.ok(err)
	return j
}

func (v *env) worker(queue string, concurrency int64) *Worker {
	v.t.Helper()
	code := "return payload"
	w, _, err := v.q.CreateWorker(v.ctx, WorkerInput{Queue: &queue, Code: &code, Concurrency: &concurrency})
	v.ok(err)
	return w
}

func i64(n int64) *int64 { return &n }

func kind(err error) engine.Kind {
	if de := engine.AsError(err); de != nil {
		return de.Kind
	}
	return engine.KindInternal
}

func TestEnqueueDefaultsAndValidation(t *testing.T) {
	v := newEnv(t)
	id, dedup, err := v.q.Enqueue(v.ctx, "mail", map[string]any{"to": "a@b.c"}, EnqueueOptions{})
	v.ok(err)
	if dedup {
		t.Fatal("a first enqueue is not deduped")
	}
	j := v.job("mail", id)
	if j.State != StateQueued || j.Attempt != 0 || j.Retries != DefaultRetries || j.Backoff != BackoffExponential ||
		j.RetryDelayMs != DefaultRetryDelayMs || string(j.Payload) != `{"to":"a@b.c"}` || j.RunAfter != v.clk.now().Unix() {
		t.Fatalf("job: %+v", j)
	}
	neg := -1.0
	_, _, err = v.q.EnqueueJSON(v.ctx, "bad queue", json.RawMessage(`{`), EnqueueOptions{Delay: &neg, Retries: i64(101), Backoff: "linear", RetryDelayMs: i64(-1)})
	de := engine.AsError(err)
	if de == nil || de.Kind != engine.KindValidation {
		t.Fatalf("want a validation error, got %v", err)
	}
	for _, f := range []string{"queue", "payload", "delay", "retries", "backoff", "retryDelayMs"} {
		if _, ok := de.Details[f]; !ok {
			t.Errorf("details lack %s: %v", f, de.Details)
		}
	}
}

func TestUniqueKeyDedupsUnfinishedJobsOnly(t *testing.T) {
	v := newEnv(t)
	a, d1, err := v.q.Enqueue(v.ctx, "q", 1, EnqueueOptions{UniqueKey: "k"})
	v.ok(err)
	b, d2, err := v.q.Enqueue(v.ctx, "q", 2, EnqueueOptions{UniqueKey: "k"})
	v.ok(err)
	if d1 || !d2 || a != b {
		t.Fatalf("second enqueue: %s %v, first %s %v", b, d2, a, d1)
	}
	// Another queue does not share the key.
	c, d3, err := v.q.Enqueue(v.ctx, "other", 3, EnqueueOptions{UniqueKey: "k"})
	v.ok(err)
	if d3 || c == a {
		t.Fatal("the key is per queue")
	}
	// Once the job succeeded, the key is free again.
	w := v.worker("q", 1)
	claimed, err := v.q.Claim(v.ctx, w.ID, "q", 5, "n1")
	v.ok(err)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d", len(claimed))
	}
	v.ok(v.q.Complete(v.ctx, a, 1, "done", nil))
	d, d4, err := v.q.Enqueue(v.ctx, "q", 4, EnqueueOptions{UniqueKey: "k"})
	v.ok(err)
	if d4 || d == a {
		t.Fatal("a finished job's key deduplicated a new job")
	}
}

func TestClaimCountsConcurrencyFromTheDatabase(t *testing.T) {
	v := newEnv(t)
	w := v.worker("q", 2)
	for i := range 5 {
		_, _, err := v.q.Enqueue(v.ctx, "q", i, EnqueueOptions{})
		v.ok(err)
		v.clk.advance(time.Millisecond)
	}
	first, err := v.q.Claim(v.ctx, w.ID, "q", 10, "n1")
	v.ok(err)
	if len(first) != 2 || first[0].Attempt != 1 || string(first[0].Payload) != "0" || string(first[1].Payload) != "1" {
		t.Fatalf("first claim: %+v", first)
	}
	// Another leader with free slots of its own claims nothing: the
	// running rows fill the worker's concurrency.
	again, err := v.q.Claim(v.ctx, w.ID, "q", 10, "n2")
	v.ok(err)
	if len(again) != 0 {
		t.Fatalf("claimed past the concurrency: %+v", again)
	}
	v.ok(v.q.Complete(v.ctx, first[0].ID, 1, nil, nil))
	next, err := v.q.Claim(v.ctx, w.ID, "q", 10, "n2")
	v.ok(err)
	if len(next) != 1 || string(next[0].Payload) != "2" {
		t.Fatalf("after a completion: %+v", next)
	}
	// A delayed job is not due before its time.
	delay := 30.0
	id, _, err := v.q.Enqueue(v.ctx, "later", nil, EnqueueOptions{Delay: &delay})
	v.ok(err)
	wl := v.worker("later", 1)
	if got, _ := v.q.Claim(v.ctx, wl.ID, "later", 1, "n1"); len(got) != 0 {
		t.Fatal("a delayed job was claimed early")
	}
	v.clk.advance(30 * time.Second)
	got, err := v.q.Claim(v.ctx, wl.ID, "later", 1, "n1")
	v.ok(err)
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("the delayed job when due: %+v", got)
	}
}

func TestFailureRetriesWithBackoffThenDies(t *testing.T) {
	v := newEnv(t)
	w := v.worker("q", 1)
	id, _, err := v.q.Enqueue(v.ctx, "q", nil, EnqueueOptions{Retries: i64(2), RetryDelayMs: i64(1000)})
	v.ok(err)
	// exponential: 1 s after the first failure, 2 s after the second.
	for attempt, wait := range []time.Duration{time.Second, 2 * time.Second} {
		c, err := v.q.Claim(v.ctx, w.ID, "q", 1, "n1")
		v.ok(err)
		if len(c) != 1 || c[0].Attempt != int64(attempt+1) {
			t.Fatalf("claim %d: %+v", attempt+1, c)
		}
		v.ok(v.q.Complete(v.ctx, id, c[0].Attempt, nil, errors.New("boom")))
		j := v.job("q", id)
		if j.State != StateQueued || j.LastError == nil || *j.LastError != "boom" {
			t.Fatalf("after failure %d: %+v", attempt+1, j)
		}
		v.clk.advance(wait - time.Millisecond)
		if c, _ := v.q.Claim(v.ctx, w.ID, "q", 1, "n1"); len(c) != 0 {
			t.Fatalf("claimed before the backoff of %s ended", wait)
		}
		v.clk.advance(time.Millisecond)
	}
	c, err := v.q.Claim(v.ctx, w.ID, "q", 1, "n1")
	v.ok(err)
	v.ok(v.q.Complete(v.ctx, id, c[0].Attempt, nil, errors.New("boom 3")))
	if j := v.job("q", id); j.State != StateDead || j.Attempt != 3 || j.Finished == nil {
		t.Fatalf("after the last retry: %+v", j)
	}
	// A stale completion changes nothing.
	if err := v.q.Complete(v.ctx, id, 3, "late", nil); kind(err) != engine.KindConflict {
		t.Fatalf("completion of a dead job: %v", err)
	}
	// Retry: queued again with its retries from the start.
	j, _, err := v.q.RetryDead(v.ctx, "q", id)
	v.ok(err)
	if j.State != StateQueued || j.Attempt != 0 {
		t.Fatalf("retried: %+v", j)
	}
	if _, _, err := v.q.RetryDead(v.ctx, "q", id); kind(err) != engine.KindConflict {
		t.Fatalf("retry of a queued job: %v", err)
	}
	if _, _, err := v.q.RetryDead(v.ctx, "other", id); kind(err) != engine.KindNotFound {
		t.Fatalf("retry through another queue: %v", err)
	}
	if got := BackoffMs(BackoffFixed, 500, 7); got != 500 {
		t.Fatalf("fixed backoff: %d", got)
	}
	if got := BackoffMs(BackoffExponential, 3600_000, 40); got != maxBackoffMs {
		t.Fatalf("capped backoff: %d", got)
	}
}

func TestReaperReleasesExpiredClaims(t *testing.T) {
	v := newEnv(t)
	_, _, err := v.e.PatchSettings(v.ctx, []byte(`{"queues.visibility_timeout_sec":"10"}`))
	v.ok(err)
	w := v.worker("q", 2)
	a, _, err := v.q.Enqueue(v.ctx, "q", "a", EnqueueOptions{})
	v.ok(err)
	b, _, err := v.q.Enqueue(v.ctx, "q", "b", EnqueueOptions{Retries: i64(0)})
	v.ok(err)
	c, err := v.q.Claim(v.ctx, w.ID, "q", 2, "old-leader")
	v.ok(err)
	if len(c) != 2 {
		t.Fatalf("claimed %d", len(c))
	}
	v.clk.advance(9 * time.Second)
	if did, err := v.q.Reap(v.ctx); err != nil || did {
		t.Fatalf("reaped before the visibility timeout: %v %v", did, err)
	}
	v.clk.advance(time.Second)
	did, err := v.q.Reap(v.ctx)
	v.ok(err)
	if !did {
		t.Fatal("nothing reaped at the visibility timeout")
	}
	if j := v.job("q", a); j.State != StateQueued || j.ClaimedBy != nil || j.Attempt != 1 {
		t.Fatalf("reaped job with retries: %+v", j)
	}
	if j := v.job("q", b); j.State != StateDead {
		t.Fatalf("reaped job without retries: %+v", j)
	}
	// The old leader's late completion is refused; the new claim holds.
	c2, err := v.q.Claim(v.ctx, w.ID, "q", 2, "new-leader")
	v.ok(err)
	if len(c2) != 1 || c2[0].ID != a || c2[0].Attempt != 2 {
		t.Fatalf("reclaim: %+v", c2)
	}
	if err := v.q.Complete(v.ctx, a, 1, nil, nil); kind(err) != engine.KindConflict {
		t.Fatalf("stale completion: %v", err)
	}
	v.ok(v.q.Complete(v.ctx, a, 2, "ok", nil))
	if j := v.job("q", a); j.State != StateSucceeded || string(j.Result) != `"ok"` {
		t.Fatalf("completed: %+v", j)
	}
}

// TestRetryBackoffCountsFromTheClaimAtMost: a failure completed by a
// worker whose clock runs far ahead of the leader's (here the one clock
// jumps past the claim's end) schedules the retry from the claim's end,
// not from that clock: the job is due again at once instead of minutes
// later.
func TestRetryBackoffCountsFromTheClaimAtMost(t *testing.T) {
	v := newEnv(t)
	w := v.worker("q", 1)
	id, _, err := v.q.Enqueue(v.ctx, "q", nil, EnqueueOptions{Retries: i64(2), RetryDelayMs: i64(1000)})
	v.ok(err)
	c, err := v.q.Claim(v.ctx, w.ID, "q", 1, "n1")
	v.ok(err)
	if len(c) != 1 {
		t.Fatalf("claim: %+v", c)
	}
	v.clk.advance(9 * time.Minute)
	v.ok(v.q.Complete(v.ctx, id, c[0].Attempt, nil, errors.New("boom")))
	c, err = v.q.Claim(v.ctx, w.ID, "q", 1, "n1")
	v.ok(err)
	if len(c) != 1 || c[0].Attempt != 2 {
		t.Fatalf("the retry is not due: %+v (job %+v)", c, v.job("q", id))
	}
}
