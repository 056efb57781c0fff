package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"svcd/engine"
	"svcd/fsm"
)

// Start starts a run of workflow name with input (any JSON value; a
// json.RawMessage is taken as is) and returns its id. The leader
// executes it as soon as the start commits.
func (m *Workflows) Start(ctx context.Context, name string, input any) (string, error) {
	id, _, err := m.StartRun(ctx, name, input)
	return id, err
}

// StartRun is Start that also answers the log index of the start.
func (m *Workflows) StartRun(ctx context.Context, name string, input any) (string, uint64, error) {
	raw, err := jsonValue("input", input)
	if err != nil {
		return "", 0, err
	}
	// Whether the workflow exists is decided by the apply (404), not by
	// this replica, which may not have applied its creation yet.
	id := engine.NewID()
	_, idx, err := m.core.Propose(ctx, cmdStart, startCmd{ID: id, Workflow: name, Input: raw, Now: m.core.Now().Unix()})
	if err != nil {
		return "", idx, err
	}
	return id, idx, nil
}

// jsonValue encodes v as compact JSON (null for nil), at most maxJSON
// bytes; field names the value in a refusal.
func jsonValue(field string, v any) (json.RawMessage, error) {
	var b []byte
	switch x := v.(type) {
	case nil:
		b = []byte("null")
	case json.RawMessage:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, engine.FieldError(field, "is not JSON: "+err.Error())
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("null")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, engine.FieldError(field, "is not JSON: "+err.Error())
	}
	if buf.Len() > maxJSON {
		return nil, engine.FieldError(field, fmt.Sprintf("is larger than %d bytes of JSON", maxJSON))
	}
	return buf.Bytes(), nil
}

// applyStart inserts the run, running and never executed.
func (m *Workflows) applyStart(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[startCmd](cmd)
	if err != nil {
		return nil, err
	}
	var n int64
	if err := tx.QueryRow(`SELECT count(*) FROM _svc_workflows WHERE name = ?`, c.Workflow).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errNoWorkflow
	}
	input := string(c.Input)
	if input == "" {
		input = "null"
	}
	if _, err := tx.Exec(`INSERT INTO _svc_workflow_runs (id, workflow, state, input, created, updated)
		VALUES (?, ?, 'running', ?, ?, ?)`, c.ID, c.Workflow, input, c.Now, c.Now); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evRunnable, Subject: c.ID})
	return nil, nil
}

// Retry resumes failed run id: its failed step runs again with fresh
// attempts (a run that failed outside a step re-executes from the top);
// the memos of its completed steps stay.
func (m *Workflows) Retry(ctx context.Context, id string) (*Run, uint64, error) {
	_, idx, err := m.core.Propose(ctx, cmdTransition, transitionCmd{Op: opRetry, Run: id, Now: m.core.Now().Unix()})
	if err != nil {
		return nil, idx, err
	}
	run, err := m.GetRun(ctx, id)
	return run, idx, err
}
