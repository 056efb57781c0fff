package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWorkflowStepRunAndSleep: step.run returns a memo that every later
// re-execution sees without calling the function again (the idempotent
// memo), step.sleep parks the run until its wake time and not before,
// and the run's listing shows its states, steps and timestamps.
func TestWorkflowStepRunAndSleep(t *testing.T) {
	t.Parallel()
	n := startWorkflowNode(t)
	n.createWorkflow(t, "memo", `
		const a = await step.run("pick", () => ({ n: Math.random(), doubled: input.x * 2 }));
		await step.sleep("nap", 30);
		const b = await step.run("echo", async () => a.n);
		return { a, b };`)
	t0 := n.clock.Now().Unix()
	id := n.start(t, "memo", map[string]any{"x": 21})

	sleeping := n.waitState(t, id, "sleeping")
	pick := sleeping.step(t, "pick")
	if pick.Kind != "run" || pick.State != "completed" || pick.Attempts != 1 || pick.Created != t0 {
		t.Errorf("step pick while sleeping: %+v", pick)
	}
	nap := sleeping.step(t, "nap")
	if nap.Kind != "sleep" || nap.State != "sleeping" || nap.WakeAt < t0+30 || nap.WakeAt > t0+31 {
		t.Errorf("step nap: %+v (started at %d)", nap, t0)
	}
	if sleeping.WakeAt == nil || *sleeping.WakeAt != nap.WakeAt || sleeping.Finished != nil || len(sleeping.Steps) != 2 {
		t.Errorf("sleeping run: %+v", sleeping)
	}
	jsonEq(t, "input", sleeping.Input, `{"x":21}`)

	// Real time passes, the node's clock does not: the run sleeps on.
	time.Sleep(1500 * time.Millisecond)
	if r := n.run(t, id); r.State != "sleeping" {
		t.Fatalf("the run woke before its wake time: %+v", r)
	}
	n.clock.Advance(31 * time.Second)
	done := n.waitState(t, id, "completed")

	var out struct {
		A struct {
			N       float64 `json:"n"`
			Doubled int     `json:"doubled"`
		} `json:"a"`
		B float64 `json:"b"`
	}
	if err := json.Unmarshal(done.Output, &out); err != nil {
		t.Fatalf("output %s: %v", done.Output, err)
	}
	jsonEq(t, "the memo of pick", done.step(t, "pick").Result, string(pick.Result))
	if out.A.Doubled != 42 || out.B != out.A.N {
		t.Errorf("output %s: the code after the sleep did not see the memo of pick %s", done.Output, pick.Result)
	}
	if got := done.step(t, "nap"); got.State != "completed" {
		t.Errorf("nap after waking: %+v", got)
	}
	// Four advances (pick, nap, echo, the end) in two executions; pick's
	// function ran once.
	for step, want := range map[string]int{"pick": 1, "echo": 1} {
		if got := n.calls(t, id, step); got != want {
			t.Errorf("the function of %s was called %d times, want %d", step, got, want)
		}
	}
	if done.Executions != 2 || done.Finished == nil || *done.Finished < t0+30 || done.Error != nil || done.Waiting != nil {
		t.Errorf("completed run: %+v", done)
	}
	if names := stepNames(done); names != "pick,nap,echo" {
		t.Errorf("steps in order: %s", names)
	}

	// The listing: newest first, with steps; a state filter; pages.
	second := n.start(t, "memo", map[string]any{"x": 1})
	n.waitState(t, second, "sleeping")
	res, body := n.Do(t, http.MethodGet, workflowsURL+"/memo/runs", nil, n.AdminHeaders(t, nil))
	var list struct {
		Data       []wfRun `json:"data"`
		Page       int     `json:"page"`
		PerPage    int     `json:"perPage"`
		TotalItems int     `json:"totalItems"`
		TotalPages int     `json:"totalPages"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil {
		t.Fatalf("list runs: %d %s", res.StatusCode, body)
	}
	if len(list.Data) != 2 || list.Data[0].ID != second || list.Data[1].ID != id || list.TotalItems != 2 || list.Page != 1 {
		t.Fatalf("list runs: %s", body)
	}
	if list.Data[1].State != "completed" || len(list.Data[1].Steps) != 3 || list.Data[0].State != "sleeping" || len(list.Data[0].Steps) != 2 {
		t.Errorf("listed runs lack their states or steps: %s", body)
	}
	_, body = n.Do(t, http.MethodGet, workflowsURL+"/memo/runs?state=completed", nil, n.AdminHeaders(t, nil))
	if !strings.Contains(string(body), `"id":"`+id+`"`) || strings.Contains(string(body), second) || !strings.Contains(string(body), `"totalItems":1`) {
		t.Errorf("runs in state completed: %s", body)
	}
	_, body = n.Do(t, http.MethodGet, workflowsURL+"/memo/runs?perPage=1&page=2", nil, n.AdminHeaders(t, nil))
	if !strings.Contains(string(body), `"id":"`+id+`"`) || !strings.Contains(string(body), `"totalPages":2`) {
		t.Errorf("the second page of one: %s", body)
	}
}

// TestWorkflowParallelStepsAndInput: steps awaited together complete in
// one advance, each function called once; a run started without a body
// has the input null; a workflow changed while a run sleeps goes on with
// the new code, its memos kept.
func TestWorkflowParallelStepsAndInput(t *testing.T) {
	t.Parallel()
	n := startWorkflowNode(t)
	n.createWorkflow(t, "fan", `
		const [a, b, c] = await Promise.all([
			step.run("a", () => 1),
			step.run("b", async () => 2),
			step.run("c", () => "three"),
		]);
		await step.sleep("wait", 5);
		return { sum: a + b, c, input };`)
	res, body := n.Do(t, http.MethodPost, workflowsURL+"/fan/start", nil, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("start without a body: %d %s", res.StatusCode, body)
	}
	var started struct {
		Data struct {
			RunID string `json:"runId"`
		} `json:"data"`
	}
	json.Unmarshal(body, &started)
	id := started.Data.RunID
	r := n.waitState(t, id, "sleeping")
	if r.Executions != 1 || stepNames(r) != "a,b,c,wait" {
		t.Errorf("run after the parallel steps: %+v", r)
	}
	// The second version uses what the first one's steps returned.
	res, body = n.Do(t, http.MethodPatch, workflowsURL+"/fan", map[string]any{"code": `
		const [a, b, c] = await Promise.all([
			step.run("a", () => 100),
			step.run("b", async () => 200),
			step.run("c", () => "ccc"),
		]);
		await step.sleep("wait", 5);
		const d = await step.run("d", () => a * 10);
		return { sum: a + b, c, d, input, version: 2 };`}, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("change the code: %d %s", res.StatusCode, body)
	}
	n.clock.Advance(6 * time.Second)
	done := n.waitState(t, id, "completed")
	jsonEq(t, "output", done.Output, `{"sum":3,"c":"three","d":10,"input":null,"version":2}`)
	for _, s := range []string{"a", "b", "c", "d"} {
		if got := n.calls(t, id, s); got != 1 {
			t.Errorf("step %s's function was called %d times, want 1", s, got)
		}
	}
}

// stepNames lists a run's step names in their order.
func stepNames(r wfRun) string {
	names := make([]string, len(r.Steps))
	for i, s := range r.Steps {
		names[i] = s.Name
	}
	return strings.Join(names, ",")
}
