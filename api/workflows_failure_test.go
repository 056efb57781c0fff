package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWorkflowFailureAndRetry: a step.run that throws is tried again
// (attempt counts on) up to its retries (default 3: four attempts), then
// the run fails naming the step; a throw outside a step, a repeated step
// name, a return value that is not JSON and code past its budget fail it
// too. Retrying a failed run resumes it: its completed steps keep their
// memos (their functions are not called again), the failed step runs
// again with fresh attempts. Only a failed run can be retried.
func TestWorkflowFailureAndRetry(t *testing.T) {
	t.Parallel()
	n := startWorkflowNode(t)
	n.createWorkflow(t, "flaky", `
		const a = await step.run("first", () => "kept");
		const b = await step.run("third-time", ({ attempt }) => {
			if (attempt < 3) throw new Error("not yet " + attempt);
			return attempt;
		});
		const c = await step.run("never", () => { throw new Error("down") });
		return { a, b, c };`)
	id := n.start(t, "flaky", nil)
	r := n.waitState(t, id, "failed")
	if r.Error == nil || *r.Error != `step "never" failed after 4 attempts: down` || r.Finished == nil {
		t.Errorf("failed run: %+v", r)
	}
	if s := r.step(t, "third-time"); s.State != "completed" || s.Attempts != 3 || string(s.Result) != "3" {
		t.Errorf("a step that threw twice: %+v", s)
	}
	if s := r.step(t, "never"); s.State != "failed" || s.Attempts != 4 || s.Error != "down" {
		t.Errorf("a step that always throws: %+v", s)
	}
	if got := n.calls(t, id, "never"); got != 4 {
		t.Errorf("the failing step ran %d times, want 4", got)
	}

	res, body := n.Do(t, http.MethodPatch, workflowsURL+"/flaky", map[string]any{"code": `
		const a = await step.run("first", () => "changed");
		const b = await step.run("third-time", () => -1);
		const c = await step.run("never", () => "fixed");
		return { a, b, c };`}, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("fix the code: %d %s", res.StatusCode, body)
	}
	res, body = n.Do(t, http.MethodPost, workflowsURL+"/runs/"+id+"/retry", nil, n.AdminHeaders(t, nil))
	// The answer is the run as the retry left it (running, its failed
	// step gone), unless the leader was quicker still.
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"error":null`) ||
		strings.Contains(string(body), `"state":"failed"`) {
		t.Fatalf("retry: %d %s", res.StatusCode, body)
	}
	done := n.waitState(t, id, "completed")
	jsonEq(t, "output after the retry", done.Output, `{"a":"kept","b":3,"c":"fixed"}`)
	if s := done.step(t, "never"); s.Attempts != 1 || s.State != "completed" {
		t.Errorf("the retried step: %+v", s)
	}
	if got := n.calls(t, id, "first"); got != 1 {
		t.Errorf("the completed step ran %d times across the retry, want 1", got)
	}
	res, body = n.Do(t, http.MethodPost, workflowsURL+"/runs/"+id+"/retry", nil, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusConflict || !strings.Contains(string(body), "Only a failed run can be retried") {
		t.Errorf("retry of a completed run: %d %s", res.StatusCode, body)
	}

	// Failures outside step functions; retries chosen per step.
	cases := []struct{ name, code, err string }{
		{"throws", `await step.run("ok", () => 1); throw new Error("boom")`, "boom"},
		{"twice", `await step.run("same", () => 1); await step.run("same", () => 2)`, `step name "same" is used twice`},
		{"kinds", `await step.run("x", () => 1); await step.sleep("x", 1)`, `step name "x" belongs to a step.run`},
		{"notjson", `return () => 1`, "the return value is not JSON"},
		{"noretry", `await step.run("once", () => { throw "plain" }, { retries: 0 })`, `step "once" failed after 1 attempts: plain`},
		{"busy", `while (true) {}`, "budget"},
		{"busystep", `await step.run("spin", () => { for (;;) {} }, { retries: 1 })`, `step "spin" failed after 2 attempts: code ran past its`},
	}
	res, body = n.Do(t, http.MethodPatch, settingsURL, map[string]any{"execution.timeout_ms": "300"}, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("set the budget: %d %s", res.StatusCode, body)
	}
	for _, c := range cases {
		n.createWorkflow(t, c.name, c.code)
		r := n.waitState(t, n.start(t, c.name, nil), "failed")
		if r.Error == nil || !strings.Contains(*r.Error, c.err) {
			t.Errorf("%s: %s with %+v, want an error with %q", c.name, r.State, r, c.err)
		}
	}

	// Deleting a workflow deletes its runs.
	res, _ = n.Do(t, http.MethodDelete, workflowsURL+"/flaky", nil, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	res, _ = n.Do(t, http.MethodGet, workflowsURL+"/runs/"+id, nil, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("a run of a deleted workflow answers %d", res.StatusCode)
	}
}
