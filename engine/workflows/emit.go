package workflows

import (
	"context"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Emit delivers event with payload to the runs waiting for it: those
// whose pending waitForEvent names event and either gave no key or gave
// key. An empty key is no key. It answers how many runs received it;
// their match functions decide, when the leader re-executes them, whether
// the event is theirs.
func (m *Workflows) Emit(ctx context.Context, event string, payload any, key string) (int, error) {
	res, _, err := m.EmitEvent(ctx, event, payload, key)
	if err != nil {
		return 0, err
	}
	return res.Woken, nil
}

// EmitEvent is Emit that also answers the log index of the emit.
func (m *Workflows) EmitEvent(ctx context.Context, event string, payload any, key string) (*EmitResult, uint64, error) {
	if err := checkEvent(event, key); err != nil {
		return nil, 0, err
	}
	raw, err := jsonValue("payload", payload)
	if err != nil {
		return nil, 0, err
	}
	c := emitCmd{Event: event, Payload: raw, Now: m.core.Now().Unix()}
	if key != "" {
		c.Key = &key
	}
	v, idx, err := m.core.Propose(ctx, cmdEmit, c)
	if err != nil {
		return nil, idx, err
	}
	res, _ := v.(*EmitResult)
	if res == nil {
		res = &EmitResult{}
	}
	return res, idx, nil
}

// checkEvent refuses an empty or oversized event name, or key.
func checkEvent(event, key string) error {
	switch {
	case strings.TrimSpace(event) == "":
		return engine.FieldError("event", "is required")
	case len(event) > maxStepName:
		return engine.FieldError("event", fmt.Sprintf("is longer than %d bytes", maxStepName))
	case len(key) > maxStepName:
		return engine.FieldError("key", fmt.Sprintf("is longer than %d bytes", maxStepName))
	}
	return nil
}

// applyEmit records one delivery, numbered by the emit's log index, for
// each run whose pending wait names the event and agrees on the key. A
// run that was claimed out of its wait (running, its wait not yet
// matched) receives it too, so an event that arrives while the leader
// checks earlier ones is not lost.
func (m *Workflows) applyEmit(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[emitCmd](cmd)
	if err != nil {
		return nil, err
	}
	res, err := tx.Exec(`INSERT INTO _svc_workflow_deliveries (run_id, seq, step, event, event_key, payload, created)
		SELECT id, ?, wait_step, wait_event, ?, ?, ? FROM _svc_workflow_runs
		WHERE wait_event = ? AND state IN ('waiting', 'running') AND (wait_key IS NULL OR wait_key = ?)
		ORDER BY id`, tx.Index(), c.Key, string(c.Payload), c.Now, c.Event, c.Key)
	if err != nil {
		return nil, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, err
	}
	if n > 0 {
		tx.Emit(fsm.Event{Kind: evRunnable, Subject: c.Event})
	}
	return &EmitResult{Woken: int(n)}, nil
}
