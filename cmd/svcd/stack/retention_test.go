package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/queue"
	"svcd/fsm"
)

// TestRetentionPrunes runs jobs to success and to death, workflow runs to
// completion and to failure, delivers webhooks, and writes audit entries; moves the node's
// clock 100 days on and does the same again; then prunes in chunks of 3
// rows: the old rows go, over several commands, the young stay. The log
// then replays into two fresh replicas with equal digests (the cutoffs
// travel in the command: no apply reads a clock).
func TestRetentionPrunes(t *testing.T) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer rc.Close()
	dir := t.TempDir()
	clock := &detClock{t: time.Now()}
	node := replOpen(t, stack.Config{DataDir: dir, Clock: clock.Now, WebhookInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := node.Engine.PatchSettings(ctx, []byte(`{"hooks.http.allow":"127.0.0.1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node.Engine.Schema().CreateCollection(ctx, []byte(`{"name":"docs_w","type":"base","fields":[{"name":"title","type":"text"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node.Webhooks.Create(ctx, []byte(`{"url":"`+rc.URL+`","events":["docs_w.create"],"retry_max":1}`)); err != nil {
		t.Fatal(err)
	}
	admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner}
	outcomes := map[uint64]detOutcome{}
	str := func(s string) *string { return &s }
	i64 := func(n int64) *int64 { return &n }
	for _, w := range []queue.WorkerInput{
		{Queue: str("ok"), Code: str(`return payload.n`), Concurrency: i64(2)},
		{Queue: str("bad"), Code: str(`throw new Error("no")`), Concurrency: i64(2)},
	} {
		if _, _, err := node.Queue.CreateWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	for name, code := range map[string]string{"done": `return await step.run("a", () => input.n)`, "fails": `throw new Error("down")`} {
		if _, _, err := node.Workflows.Create(ctx, name, code); err != nil {
			t.Fatal(err)
		}
	}
	generation := func(n int) {
		t.Helper()
		for i := range n {
			for _, q := range []string{"ok", "bad"} {
				if _, _, err := node.Queue.EnqueueJSON(ctx, q, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), queue.EnqueueOptions{Retries: i64(0)}); err != nil {
					t.Fatal(err)
				}
			}
			for _, w := range []string{"done", "fails"} {
				if _, _, err := node.Workflows.StartRun(ctx, w, map[string]any{"n": i}); err != nil {
					t.Fatal(err)
				}
			}
			if err := node.Auth.Admins().Audit(ctx, auth.AuditEntry{ActorID: "t", Action: "test.entry", Target: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := node.Engine.Records().CreateRecord(ctx, admin, "docs_w", []byte(`{"title":"t"}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(q string) int64 {
		t.Helper()
		var n int64
		if err := node.Store.View(ctx, func(r *fsm.Reader) error { return r.QueryRow(q).Scan(&n) }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const (
		succeeded = `SELECT count(*) FROM _svc_queue_jobs WHERE state = 'succeeded'`
		dead      = `SELECT count(*) FROM _svc_queue_jobs WHERE state = 'dead'`
		completed = `SELECT count(*) FROM _svc_workflow_runs WHERE state = 'completed'`
		failed    = `SELECT count(*) FROM _svc_workflow_runs WHERE state = 'failed'`
		audits    = `SELECT count(*) FROM _svc_audit WHERE action = 'test.entry'`
		steps     = `SELECT count(*) FROM _svc_workflow_steps`
		delivered = `SELECT count(*) FROM _svc_webhook_deliveries WHERE status = 'succeeded'`
	)
	settle := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for count(succeeded) != want || count(dead) != want || count(completed) != want || count(failed) != want || count(delivered) != want {
			if time.Now().After(deadline) {
				t.Fatalf("jobs, runs and deliveries did not finish: %d succeeded, %d dead, %d completed, %d failed, %d delivered (want %d each)",
					count(succeeded), count(dead), count(completed), count(failed), count(delivered), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	generation(4)
	settle(4)
	oldSteps := count(steps)
	clock.Advance(100 * 24 * time.Hour)
	generation(2)
	settle(6)
	if count(audits) != 6 || count(steps) <= oldSteps {
		t.Fatalf("setup: %d audit entries, %d steps (before the clock moved %d)", count(audits), count(steps), oldSteps)
	}

	// Defaults: succeeded jobs 7 days, dead jobs 30, runs 30, audit 90,
	// deliveries 7.
	commandsBefore := node.Store.AppliedIndex()
	res, idx, err := node.Engine.Prune(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	outcomes[idx] = detOutcome{op: "prune", result: replOutcome(nil)}
	want := map[string]int64{"queue_jobs_succeeded": 4, "queue_jobs_dead": 4, "workflow_runs": 8, "audit": 4, "webhook_deliveries": 4}
	for k, n := range want {
		if res.Pruned[k] != n {
			t.Errorf("pruned %s: %d, want %d (all: %v)", k, res.Pruned[k], n, res.Pruned)
		}
	}
	if _, ok := res.Pruned["history"]; ok {
		t.Errorf("history is pruned though off by default: %v", res.Pruned)
	}
	if n := node.Store.AppliedIndex() - commandsBefore; n < 8 {
		t.Errorf("24 rows in chunks of 3 took %d commands", n)
	}
	for q, n := range map[string]int64{succeeded: 2, dead: 2, completed: 2, failed: 2, audits: 2, delivered: 2} {
		if got := count(q); got != n {
			t.Errorf("%s: %d left, want %d", q, got, n)
		}
	}
	if got := count(`SELECT count(*) FROM _svc_workflow_steps WHERE run_id NOT IN (SELECT id FROM _svc_workflow_runs)`); got != 0 {
		t.Errorf("%d steps of pruned runs are left", got)
	}
	// Nothing is left to prune: a second run deletes nothing.
	res, _, err = node.Engine.Prune(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range res.Pruned {
		if n != 0 {
			t.Errorf("second run pruned %d %s", n, k)
		}
	}
	node.close(t)
	rep := replayCheck(t, dir, 20261126, 16, outcomes)
	if rep.digest["table:_svc_queue_jobs"] == "" || rep.digest["table:_svc_audit"] == "" {
		t.Errorf("the digest misses the pruned tables: %v", rep.digest)
	}
}

// TestRetentionScheduled: the leader's loop prunes by itself and writes
// one audit entry for the run (actor system, action retention.prune).
func TestRetentionScheduled(t *testing.T) {
	clock := &detClock{t: time.Now()}
	node := replOpen(t, stack.Config{DataDir: t.TempDir(), Clock: clock.Now, RetentionFirst: 3 * time.Second})
	defer node.close(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 3 {
		if err := node.Auth.Admins().Audit(ctx, auth.AuditEntry{ActorID: "t", Action: "test.entry", Target: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(91 * 24 * time.Hour)
	count := func(q string) (n int64) {
		t.Helper()
		if err := node.Store.View(ctx, func(r *fsm.Reader) error { return r.QueryRow(q).Scan(&n) }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(20 * time.Second)
	for count(`SELECT count(*) FROM _svc_audit WHERE action = 'test.entry'`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the scheduled run did not prune the audit entries of 91 days ago")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var target string
	for time.Now().Before(deadline) {
		err := node.Store.View(ctx, func(r *fsm.Reader) error {
			return r.QueryRow(`SELECT target FROM _svc_audit WHERE action = 'retention.prune' AND actor_id = 'system'`).Scan(&target)
		})
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if target != "audit=3 queue_jobs_dead=0 queue_jobs_succeeded=0 webhook_deliveries=0 workflow_runs=0" {
		t.Fatalf("the run's audit entry: %q", target)
	}
	if n := count(`SELECT count(*) FROM _svc_audit WHERE action = 'retention.prune'`); n != 1 {
		t.Fatalf("%d audit entries of the run, want one", n)
	}
}
