package jepsen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// Workflows in a three-node cluster (docs/workflows.md "In a cluster"):
// the leader executes runs; a new leader resumes what the old one left.

// workflowRun is the part of a run the cluster test reads.
type workflowRun struct {
	State      string          `json:"state"`
	Output     json.RawMessage `json:"output"`
	Executions int             `json:"executions"`
	Steps      []struct {
		Name   string          `json:"name"`
		State  string          `json:"state"`
		Result json.RawMessage `json:"result"`
	} `json:"steps"`
}

// getRun reads run id through nd (nil while nd cannot answer).
func getRun(c *harness.Cluster, nd *harness.Node, id string) *workflowRun {
	resp, err := c.Admin(nd).Do(context.Background(), "GET", "/api/v1/admin/workflows/runs/"+id, nil)
	if err != nil || resp.Status != http.StatusOK {
		return nil
	}
	var out struct {
		Data workflowRun `json:"data"`
	}
	if resp.JSON(&out) != nil {
		return nil
	}
	return &out.Data
}

// waitRunState polls run id through the running nodes until it is in
// state.
func waitRunState(t *testing.T, c *harness.Cluster, id, state string, timeout time.Duration) *workflowRun {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last *workflowRun
	for time.Now().Before(deadline) {
		for _, nd := range c.Running() {
			if r := getRun(c, nd, id); r != nil {
				last = r
				if r.State == state {
					return r
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %s not %s within %s; last seen %+v", id, state, timeout, last)
	return nil
}

// stepCalls counts, per node, the log lines in which that node's
// executor called the function of step of run.
func stepCalls(t *testing.T, c *harness.Cluster, run, step string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, nd := range c.Nodes() {
		b, err := nd.ReadLog()
		if err != nil {
			t.Fatalf("%s: log: %v", nd.Name, err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			var rec struct {
				Msg  string `json:"msg"`
				Run  string `json:"run"`
				Step string `json:"step"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "workflow step function called" && rec.Run == run && rec.Step == step {
				out[nd.Name]++
			}
		}
	}
	return out
}

// TestWorkflowSleepsAcrossLeaderKill: a run that completed a step and
// sleeps when its leader is SIGKILLed completes on the new leader after
// its wake time; the completed step's function is not called again (its
// memo is in the log), the steps after the sleep run on the new leader,
// and every node ends with the same tables.
func TestWorkflowSleepsAcrossLeaderKill(t *testing.T) {
	c := startCluster(t, 3, "SVC_LOG_LEVEL=debug")
	leader := c.MustLeader(t, leaderTimeout)
	mustDo(t, c.Admin(leader), "POST", "/api/v1/admin/workflows", map[string]any{"name": "nap", "code": `
		const a = await step.run("before", () => ({ r: Math.random(), who: "first" }));
		await step.sleep("nap", 4);
		const b = await step.run("after", () => a.r);
		return { a, b };`}, http.StatusCreated)
	// Started through a follower: forwarded to the leader, executed there.
	follower := c.Followers()[0]
	resp := mustDo(t, c.Admin(follower), "POST", "/api/v1/admin/workflows/nap/start", map[string]any{"input": nil}, http.StatusOK)
	var started struct {
		Data struct {
			RunID string `json:"runId"`
		} `json:"data"`
	}
	if err := resp.JSON(&started); err != nil || started.Data.RunID == "" {
		t.Fatalf("start: %s", resp)
	}
	id := started.Data.RunID
	sleeping := waitRunState(t, c, id, "sleeping", 20*time.Second)
	var before json.RawMessage
	for _, s := range sleeping.Steps {
		if s.Name == "before" && s.State == "completed" {
			before = s.Result
		}
	}
	if before == nil {
		t.Fatalf("sleeping run without the memo of its first step: %+v", sleeping)
	}
	c.Kill(t, leader.Name)
	newLeader := c.MustLeader(t, leaderTimeout)
	t.Logf("killed leader %s while run %s slept; new leader %s", leader.Name, id, newLeader.Name)

	done := waitRunState(t, c, id, "completed", 30*time.Second)
	var out struct {
		A json.RawMessage `json:"a"`
		B float64         `json:"b"`
	}
	if err := json.Unmarshal(done.Output, &out); err != nil {
		t.Fatalf("output %s: %v", done.Output, err)
	}
	var a struct {
		R float64 `json:"r"`
	}
	json.Unmarshal(before, &a)
	if !bytes.Equal(compactJSON(t, out.A), compactJSON(t, before)) || out.B != a.R {
		t.Errorf("output %s: the code after the sleep did not see the memo %s of the first leader", done.Output, before)
	}
	if done.Executions < 2 {
		t.Errorf("the run was executed %d times; the new leader must have claimed it", done.Executions)
	}
	first := stepCalls(t, c, id, "before")
	if len(first) != 1 || first[leader.Name] != 1 {
		t.Errorf("calls of the completed step's function by node: %v; want once, by the killed leader %s", first, leader.Name)
	}
	second := stepCalls(t, c, id, "after")
	if second[leader.Name] != 0 || second[newLeader.Name] != 1 {
		t.Errorf("calls of the step after the sleep by node: %v; want once, by the new leader %s", second, newLeader.Name)
	}
	if _, err := c.Converge(convergeTimeout); err != nil {
		t.Fatalf("the running nodes do not converge: %v", err)
	}
}

// compactJSON is raw compacted.
func compactJSON(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return buf.Bytes()
}
