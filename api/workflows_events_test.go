package api_test

import (
	"testing"
	"time"
)

// TestWorkflowWaitForEvent: an emit reaches the runs waiting on its event
// name whose key agrees (a wait with a key takes only that key; one
// without takes any); the match function decides, on the leader, whether
// a delivered event is the run's: a refused one is dropped and the run
// waits on; the accepted payload is what waitForEvent returns. Events
// emitted before a run waits are not delivered to it; a timeout ends the
// wait with null.
func TestWorkflowWaitForEvent(t *testing.T) {
	t.Parallel()
	n := startWorkflowNode(t)
	n.createWorkflow(t, "pay", `
		const opts = { match: (p, ev) => p.amount >= input.min && ev.event === "paid" };
		if (input.order) opts.key = input.order;
		const paid = await step.waitForEvent("paid", opts);
		const after = await step.run("after", () => paid.amount + 1);
		return { paid, after };`)
	keyed := n.start(t, "pay", map[string]any{"order": "o1", "min": 10})
	other := n.start(t, "pay", map[string]any{"order": "o2", "min": 0})
	anyKey := n.start(t, "pay", map[string]any{"min": 0})
	for _, id := range []string{keyed, other, anyKey} {
		r := n.waitState(t, id, "waiting")
		if r.Waiting == nil || r.Waiting.Step != "paid" || r.Waiting.Event != "paid" || r.step(t, "paid").State != "waiting" {
			t.Fatalf("waiting run: %+v", r)
		}
	}
	if k := n.run(t, keyed).Waiting.Key; k == nil || *k != "o1" {
		t.Errorf("the keyed run waits for key %v, want o1", k)
	}
	if k := n.run(t, anyKey).Waiting.Key; k != nil {
		t.Errorf("the run without a key waits for key %q", *k)
	}

	// Another key: only the run that waits for any key receives it.
	if got := n.emit(t, "paid", "o3", map[string]any{"amount": 50}); got != 1 {
		t.Errorf("emit paid/o3 reached %d runs, want 1", got)
	}
	done := n.waitState(t, anyKey, "completed")
	jsonEq(t, "output", done.Output, `{"paid":{"amount":50},"after":51}`)
	jsonEq(t, "the wait's memo", done.step(t, "paid").Result, `{"amount":50}`)

	// Another event name, and no key for runs that want one: nobody.
	if got := n.emit(t, "refunded", "o1", map[string]any{"amount": 50}); got != 0 {
		t.Errorf("emit refunded reached %d runs", got)
	}
	if got := n.emit(t, "paid", "", map[string]any{"amount": 50}); got != 0 {
		t.Errorf("emit paid without a key reached %d runs", got)
	}

	// The right key, refused by match: delivered, then dropped; the run
	// waits again, with one more execution.
	before := n.run(t, keyed).Executions
	if got := n.emit(t, "paid", "o1", map[string]any{"amount": 5}); got != 1 {
		t.Errorf("emit paid/o1 reached %d runs, want 1", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n.run(t, keyed).Executions == before {
		if time.Now().After(deadline) {
			t.Fatal("the run was not re-executed for its delivered event")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := n.waitState(t, keyed, "waiting")
	if r.step(t, "paid").State != "waiting" || len(r.Steps) != 1 {
		t.Errorf("after a refused event: %+v", r)
	}
	// Accepted.
	if got := n.emit(t, "paid", "o1", map[string]any{"amount": 12}); got != 1 {
		t.Errorf("emit paid/o1 reached %d runs, want 1", got)
	}
	done = n.waitState(t, keyed, "completed")
	jsonEq(t, "output", done.Output, `{"paid":{"amount":12},"after":13}`)
	if r := n.run(t, other); r.State != "waiting" {
		t.Errorf("the run waiting for o2 moved: %+v", r)
	}

	// An event emitted before the run waits is not its.
	n.createWorkflow(t, "late", `
		await step.sleep("first", 10);
		return await step.waitForEvent("go", { timeout: 60 });`)
	late := n.start(t, "late", nil)
	n.waitState(t, late, "sleeping")
	if got := n.emit(t, "go", "", "early"); got != 0 {
		t.Errorf("an emit before the wait reached %d runs", got)
	}
	n.clock.Advance(11 * time.Second)
	r = n.waitState(t, late, "waiting")
	wait := r.step(t, "go")
	now := n.clock.Now().Unix()
	if wait.WakeAt < now+60 || wait.WakeAt > now+61 || r.WakeAt == nil || *r.WakeAt != wait.WakeAt {
		t.Errorf("a wait with a 60 s timeout at %d: %+v", now, r)
	}
	// Its timeout passes: waitForEvent returns null.
	n.clock.Advance(61 * time.Second)
	done = n.waitState(t, late, "completed")
	jsonEq(t, "output after the timeout", done.Output, `null`)
	if s := done.step(t, "go"); s.State != "completed" {
		t.Errorf("the timed-out wait: %+v", s)
	}
}
