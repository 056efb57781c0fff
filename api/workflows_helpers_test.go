package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
)

const workflowsURL = "/api/v1/admin/workflows"

// wfNode is a node for workflow tests: its log (debug, JSON) is captured,
// and its clock stands still until the test moves it (sleeps and
// timeouts end when the test says so; the executor looks for due runs
// every second of real time).
type wfNode struct {
	*apitest.Server
	logs  *logCapture
	clock *apitest.Clock
}

func startWorkflowNode(t *testing.T) *wfNode {
	t.Helper()
	logs := &logCapture{}
	clock := apitest.NewClock(time.Now())
	s := apitest.Start(t, apitest.Options{Logger: logs.logger(), Clock: clock.Now})
	return &wfNode{Server: s, logs: logs, clock: clock}
}

// wfRun is a run as GET /admin/workflows/runs/:id answers it.
type wfRun struct {
	ID         string          `json:"id"`
	Workflow   string          `json:"workflow"`
	State      string          `json:"state"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output"`
	Error      *string         `json:"error"`
	Executions int64           `json:"executions"`
	WakeAt     *int64          `json:"wake_at"`
	Waiting    *struct {
		Step  string  `json:"step"`
		Event string  `json:"event"`
		Key   *string `json:"key"`
	} `json:"waiting"`
	Steps    []wfStep `json:"steps"`
	Created  int64    `json:"created"`
	Updated  int64    `json:"updated"`
	Finished *int64   `json:"finished"`
}

type wfStep struct {
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	State    string          `json:"state"`
	Result   json.RawMessage `json:"result"`
	Error    string          `json:"error"`
	Attempts int             `json:"attempts"`
	WakeAt   int64           `json:"wake_at"`
	Event    string          `json:"event"`
	Key      *string         `json:"key"`
	Created  int64           `json:"created"`
	Updated  int64           `json:"updated"`
}

// step returns the run's step name (failing the test without it).
func (r wfRun) step(t testing.TB, name string) wfStep {
	t.Helper()
	for _, s := range r.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("run %s has no step %q: %+v", r.ID, name, r.Steps)
	return wfStep{}
}

// createWorkflow creates workflow name with code.
func (n *wfNode) createWorkflow(t testing.TB, name, code string) {
	t.Helper()
	res, body := n.Do(t, http.MethodPost, workflowsURL, map[string]any{"name": name, "code": code}, n.AdminHeaders(t, nil))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create workflow %s: %d %s", name, res.StatusCode, body)
	}
}

// start starts a run of name with input and returns its id.
func (n *wfNode) start(t testing.TB, name string, input any) string {
	t.Helper()
	res, body := n.Do(t, http.MethodPost, workflowsURL+"/"+name+"/start", map[string]any{"input": input}, n.AdminHeaders(t, nil))
	var out struct {
		Data struct {
			RunID string `json:"runId"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.Data.RunID == "" {
		t.Fatalf("start %s: %d %s", name, res.StatusCode, body)
	}
	return out.Data.RunID
}

// run reads run id.
func (n *wfNode) run(t testing.TB, id string) wfRun {
	t.Helper()
	res, body := n.Do(t, http.MethodGet, workflowsURL+"/runs/"+id, nil, n.AdminHeaders(t, nil))
	var out struct {
		Data wfRun `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
		t.Fatalf("get run %s: %d %s", id, res.StatusCode, body)
	}
	return out.Data
}

// waitState waits (10 s at most) until run id is in state, and returns it.
func (n *wfNode) waitState(t testing.TB, id, state string) wfRun {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := n.run(t, id)
		if r.State == state {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, not %s, after 10 s: %+v", id, r.State, state, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// emit emits event and returns how many runs received it.
func (n *wfNode) emit(t testing.TB, event, key string, payload any) int {
	t.Helper()
	body := map[string]any{"event": event, "payload": payload}
	if key != "" {
		body["key"] = key
	}
	res, out := n.Do(t, http.MethodPost, workflowsURL+"/events", body, n.AdminHeaders(t, nil))
	var got struct {
		Data struct {
			Woken *int `json:"woken"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(out, &got) != nil || got.Data.Woken == nil {
		t.Fatalf("emit %s: %d %s", event, res.StatusCode, out)
	}
	return *got.Data.Woken
}

// calls counts how often the executor called the function of step of run
// (its log line "workflow step function called").
func (n *wfNode) calls(t testing.TB, run, step string) int {
	t.Helper()
	c := 0
	for _, rec := range n.logs.records(t, "workflow step function called") {
		if rec["run"] == run && rec["step"] == step {
			c++
		}
	}
	return c
}

// jsonEq fails the test unless raw is the JSON of want.
func jsonEq(t testing.TB, what string, raw json.RawMessage, want string) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", what, raw, err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("%s: want %q is not JSON: %v", what, want, err)
	}
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	if string(ab) != string(bb) {
		t.Errorf("%s = %s, want %s", what, ab, bb)
	}
}
