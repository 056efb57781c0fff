package queue

import (
	"errors"
	"testing"

	"svcd/engine"
)

// A built-in queue's jobs are claimed without a worker, counted against
// the concurrency the claim carries, and completed, retried and
// dead-lettered like any other; no worker may be saved for the queue.
func TestBuiltinQueueClaims(t *testing.T) {
	v := newEnvWith(t, Options{Builtin: []string{"svc.push"}})
	if !v.q.Builtin("svc.push") || v.q.Builtin("mail") {
		t.Fatal("Builtin does not report the configured queues")
	}
	for i := range 3 {
		_, _, err := v.q.Enqueue(v.ctx, "svc.push", i, EnqueueOptions{Retries: i64(1), RetryDelayMs: i64(0)})
		v.ok(err)
	}
	first, err := v.q.ClaimBuiltin(v.ctx, "svc.push", 2, 10, "n1")
	v.ok(err)
	if len(first) != 2 || first[0].Attempt != 1 {
		t.Fatalf("first claim: %+v", first)
	}
	// Another leader claims nothing while two run.
	again, err := v.q.ClaimBuiltin(v.ctx, "svc.push", 2, 10, "n2")
	v.ok(err)
	if len(again) != 0 {
		t.Fatalf("claimed past the concurrency: %+v", again)
	}
	// A failed attempt is queued again (no delay), then dies after its
	// one retry.
	v.ok(v.q.Complete(v.ctx, first[0].ID, 1, nil, errors.New("503 from the provider")))
	if j := v.job("svc.push", first[0].ID); j.State != StateQueued || j.LastError == nil {
		t.Fatalf("after a failure: %+v", j)
	}
	v.ok(v.q.Complete(v.ctx, first[1].ID, 1, map[string]int{"sent": 1}, nil))
	next, err := v.q.ClaimBuiltin(v.ctx, "svc.push", 2, 10, "n2")
	v.ok(err)
	if len(next) != 2 {
		t.Fatalf("second claim: %+v", next)
	}
	for _, c := range next {
		if c.ID == first[0].ID {
			if c.Attempt != 2 {
				t.Fatalf("the retried job's attempt: %+v", c)
			}
			v.ok(v.q.Complete(v.ctx, c.ID, 2, nil, errors.New("503 again")))
		}
	}
	if j := v.job("svc.push", first[0].ID); j.State != StateDead {
		t.Fatalf("after its retries: %+v", j)
	}
	if j := v.job("svc.push", first[1].ID); j.State != StateSucceeded || string(j.Result) != `{"sent":1}` {
		t.Fatalf("the succeeded job: %+v", j)
	}
	// A queue that is not built-in is not claimed this way.
	if got, err := v.q.ClaimBuiltin(v.ctx, "mail", 1, 1, "n1"); err != nil || got != nil {
		t.Fatalf("ClaimBuiltin of an ordinary queue: %v %v", got, err)
	}
	// No worker for a built-in queue.
	queue, code := "svc.push", "return 1"
	_, _, err = v.q.CreateWorker(v.ctx, WorkerInput{Queue: &queue, Code: &code})
	if de := engine.AsError(err); de == nil || de.Kind != engine.KindValidation || de.Details["queue"] == nil {
		t.Fatalf("a worker for a built-in queue: %v", err)
	}
	stats, err := v.q.Queues(v.ctx)
	v.ok(err)
	if len(stats) != 1 || !stats[0].Builtin || stats[0].Worker != nil {
		t.Fatalf("queue overview: %+v", stats)
	}
}
