package stack_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
)

// TestDeterministicReplayWorkflows runs workflows on a node (its leader
// executes them: claims, memos of single and parallel steps, retries,
// sleeps woken by a moved clock, waits fed by concurrent emits whose match
// refuses some, failures, a retry, a delete with runs), then replays its
// log into two fresh replicas and requires identical digests: whatever
// the executor proposed, and whichever of its commands the fence refused,
// every replica holds the same runs, memos and deliveries.
func TestDeterministicReplayWorkflows(t *testing.T) {
	seed := detSeed(t, 20261127)
	dir := t.TempDir()
	clock := &detClock{t: time.Now()}
	node := replOpen(t, stack.Config{DataDir: dir, Clock: clock.Now})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wf := node.Workflows
	outcomes := map[uint64]detOutcome{}
	var mu sync.Mutex
	note := func(op string, idx uint64, err error) {
		mu.Lock()
		defer mu.Unlock()
		if idx > 0 {
			outcomes[idx] = detOutcome{op: op, result: replOutcome(err)}
		}
	}
	for name, code := range map[string]string{
		"chain": `
			const a = await step.run("a", () => input.n);
			const b = await step.run("b", async () => a * 2);
			await step.sleep("nap", 5);
			const p = await step.waitForEvent("go", { key: input.k, match: (x) => x.ok });
			return a + b + p.v;`,
		"flaky": `
			await step.run("twice", ({ attempt }) => { if (attempt < 3) throw new Error("no " + attempt); return attempt; });
			await step.run("never", () => { throw new Error("down"); }, { retries: 1 });`,
		"par": `
			const v = await Promise.all([1, 2, 3, 4].map((i) => step.run("p" + i, () => i * input.n)));
			return v;`,
	} {
		_, idx, err := wf.Create(ctx, name, code)
		note("create", idx, err)
		if err != nil {
			t.Fatal(err)
		}
	}
	var runs sync.Map // id -> workflow
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := range 5 {
				name := []string{"chain", "chain", "flaky", "par"}[(g+i)%4]
				id, idx, err := wf.StartRun(ctx, name, map[string]any{"n": g*10 + i, "k": fmt.Sprintf("k%d", g)})
				note("start", idx, err)
				if err == nil {
					runs.Store(id, name)
				}
			}
		}(g)
	}
	wg.Wait()
	_, idx, err := wf.StartRun(ctx, "missing", nil)
	note("start missing", idx, err)

	waitRuns := func(want func(workflow, state string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			pending := 0
			runs.Range(func(k, v any) bool {
				r, err := wf.GetRun(ctx, k.(string))
				if err != nil || !want(v.(string), r.State) {
					pending++
				}
				return true
			})
			if pending == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d runs not in the wanted state after 30 s", pending)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	final := func(wf, state string) bool {
		switch wf {
		case "flaky":
			return state == "failed"
		case "par":
			return state == "completed"
		}
		return false
	}
	waitRuns(func(w, s string) bool { return final(w, s) || (w == "chain" && s == "sleeping") })
	clock.Advance(6 * time.Second)
	waitRuns(func(w, s string) bool { return final(w, s) || (w == "chain" && s == "waiting") })

	// Concurrent emits: refused by match first, then accepted; some for
	// keys nobody waits for.
	for _, ok := range []bool{false, true} {
		for g := range 5 {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				_, idx, err := wf.EmitEvent(ctx, "go", map[string]any{"ok": ok, "v": g}, fmt.Sprintf("k%d", g))
				note("emit", idx, err)
			}(g)
		}
		wg.Wait()
	}
	waitRuns(func(w, s string) bool { return final(w, s) || (w == "chain" && s == "completed") })

	// A retry of each failed run (it fails again), of a completed one
	// (refused), then the parallel workflow deleted with its runs.
	runs.Range(func(k, v any) bool {
		_, idx, err := wf.Retry(ctx, k.(string))
		note("retry "+v.(string), idx, err)
		return true
	})
	waitRuns(func(w, s string) bool { return final(w, s) || (w == "chain" && s == "completed") })
	idx, err = wf.Delete(ctx, "par")
	note("delete", idx, err)
	node.close(t)

	kinds := map[string]int{}
	for _, o := range outcomes {
		kinds[o.op+": "+o.result]++
	}
	t.Logf("outcomes: %v", kinds)
	for _, want := range []string{"start: ok", "emit: ok", "retry flaky: ok", "delete: ok"} {
		if kinds[want] == 0 {
			t.Errorf("no %q in the workload", want)
		}
	}
	rep := replayCheck(t, dir, seed, 16, outcomes)
	for _, table := range []string{"table:_svc_workflows", "table:_svc_workflow_runs", "table:_svc_workflow_steps"} {
		if rep.digest[table] == "" {
			t.Errorf("the digest has no %s: %v", table, rep.digest)
		}
	}
}

// detClock is a wall clock the test moves.
type detClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *detClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *detClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
