package api_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestRestoreDoesNotRepeatSideEffects: a backup taken while two jobs are
// queued, restored after they have run: they stay succeeded (the work is
// not done a second time, although the backup holds them queued); a job
// enqueued only after the backup goes with the rest of what the restore
// rolls back.
func TestRestoreDoesNotRepeatSideEffects(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	owner := s.AdminToken(t)
	a := enqueue(t, s, "mail", map[string]any{"payload": map[string]any{"to": "a@example.com"}})
	b := enqueue(t, s, "mail", map[string]any{"payload": map[string]any{"to": "b@example.com"}})
	backup := downloadBackup(t, s, owner, "", nil)

	createWorker(t, s, "mail", "return {sent: payload.to}", 2)
	waitJob(t, s, "mail", a, "succeeded")
	waitJob(t, s, "mail", b, "succeeded")
	late := enqueue(t, s, "later", map[string]any{"payload": 1})

	if res, body := upload(t, s, owner, backup.data, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("restore: %d %s", res.StatusCode, body)
	}
	for _, id := range []string{a, b} {
		if j := getJob(t, s, "mail", id); j.State != "succeeded" || j.Attempt != 1 || string(j.Result) == "" {
			t.Errorf("job %s after the restore: %s, attempt %d, result %s (want succeeded, as it ran)", id, j.State, j.Attempt, j.Result)
		}
	}
	if res, body := s.AdminDo(t, http.MethodGet, queuesURL+"/later/jobs/"+late, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("a job enqueued after the backup, after the restore: %d %s (want 404)", res.StatusCode, body)
	}
}

// TestRestoreDoesNotResendWebhooks: a backup taken while a delivery waits
// for its retry, restored after the retry succeeded: the delivery stays
// succeeded and the receiver gets nothing more.
func TestRestoreDoesNotResendWebhooks(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	owner := s.AdminToken(t)
	var up atomic.Bool
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "retry_max": 3,
		"retry_backoff": "fixed", "retry_delay_ms": 1500, "secret": "k"})["id"].(string)
	id := dispatchOne(t, s)
	waitDelivery(t, s, hook, id, inState("retrying"))
	backup := downloadBackup(t, s, owner, "", nil)
	up.Store(true)
	waitDelivery(t, s, hook, id, inState("succeeded"))
	sent := len(rc.requests())

	if res, body := upload(t, s, owner, backup.data, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("restore: %d %s", res.StatusCode, body)
	}
	time.Sleep(2500 * time.Millisecond) // past the backup's next attempt
	if d := waitDelivery(t, s, hook, id, func(map[string]any) bool { return true }); d["status"] != "succeeded" {
		t.Errorf("the delivery after the restore: %v (want succeeded, as it was)", d)
	}
	if got := len(rc.requests()); got != sent {
		t.Errorf("the receiver got %d requests after the restore, %d before: the delivery was sent again", got, sent)
	}
}

// TestRestoreKeepsWorkflowProgress: a backup taken while a run waits for
// an event, restored after the event finished it: the run stays completed
// with its steps' memos, and no step runs again.
func TestRestoreKeepsWorkflowProgress(t *testing.T) {
	t.Parallel()
	n := startWorkflowNode(t)
	owner := n.AdminToken(t)
	n.createWorkflow(t, "w", `const a = await step.run("a", () => 1);
const ev = await step.waitForEvent("go", { key: "k" });
const b = await step.run("b", () => a + ev.n);
return { b };`)
	run := n.start(t, "w", nil)
	n.waitState(t, run, "waiting")
	backup := downloadBackup(t, n.Server, owner, "", nil)
	n.emit(t, "go", "k", map[string]any{"n": 2})
	n.waitState(t, run, "completed")

	if res, body := upload(t, n.Server, owner, backup.data, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("restore: %d %s", res.StatusCode, body)
	}
	time.Sleep(1500 * time.Millisecond) // the executor looks for due runs every second
	r := n.run(t, run)
	if r.State != "completed" || len(r.Steps) != 3 {
		t.Errorf("the run after the restore: %s with %d steps (want completed, with its 3 steps)", r.State, len(r.Steps))
	}
	jsonEq(t, "the run's output", r.Output, `{"b":3}`)
	if c := n.calls(t, run, "b"); c != 1 {
		t.Errorf("step b ran %d times", c)
	}
}
