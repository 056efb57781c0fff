package workflows

import (
	"database/sql"
	"errors"
	"fmt"

	"svcd/engine"
	"svcd/fsm"
)

// applyTransition moves a run (transitionCmd). Every op but claim and
// retry is fenced: it applies only to a running run whose execution count
// is the proposer's.
func (m *Workflows) applyTransition(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[transitionCmd](cmd)
	if err != nil {
		return nil, err
	}
	switch c.Op {
	case opClaim:
		return nil, applyClaim(tx, c)
	case opRetry:
		return nil, applyRetry(tx, c)
	case opSleep, opWait, opComplete, opFail:
	default:
		return nil, fmt.Errorf("%w: workflows.transition: unknown op %q", fsm.ErrHalt, c.Op)
	}
	if err := fenced(tx, c.Run, c.Exec); err != nil {
		return nil, err
	}
	switch c.Op {
	case opSleep:
		err = applySleep(tx, c)
	case opWait:
		err = applyWait(tx, c)
	case opComplete:
		err = finish(tx, c.Run, "completed", "output", string(c.Output), c.Now)
	case opFail:
		err = finish(tx, c.Run, "failed", "error", c.Error, c.Now)
	}
	return nil, err
}

// fenced refuses a command of an execution that is not the run's current
// one (errStale), or of a run that is gone or not running.
func fenced(tx *fsm.Tx, run string, exec int64) error {
	var state string
	var execs int64
	err := tx.QueryRow(`SELECT state, executions FROM _svc_workflow_runs WHERE id = ?`, run).Scan(&state, &execs)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (state != "running" || execs != exec)) {
		return errStale
	}
	return err
}

// applyClaim starts an execution: a compare-and-set on the execution
// count, for a run that is running (its executor died or gave it up),
// sleeping past its wake time, or waiting with an event delivered or its
// timeout passed. A sleep that ends here is the sleep step's completion.
func applyClaim(tx *fsm.Tx, c *transitionCmd) error {
	var state string
	var execs, wake, delivered int64
	err := tx.QueryRow(`SELECT state, executions, wake_at,
		(SELECT count(*) FROM _svc_workflow_deliveries WHERE run_id = r.id)
		FROM _svc_workflow_runs r WHERE id = ?`, c.Run).Scan(&state, &execs, &wake, &delivered)
	if errors.Is(err, sql.ErrNoRows) {
		return errNoRun
	}
	if err != nil {
		return err
	}
	if execs != c.Exec {
		return errStale
	}
	switch state {
	case "running":
	case "sleeping":
		if wake > c.Now {
			return errNotDue
		}
		if _, err := tx.Exec(`UPDATE _svc_workflow_steps SET state = 'completed', updated = max(?, updated)
			WHERE run_id = ? AND kind = 'sleep' AND state = 'sleeping' AND wake_at <= ?`, c.Now, c.Run, c.Now); err != nil {
			return err
		}
	case "waiting":
		if delivered == 0 && (wake == 0 || wake > c.Now) {
			return errNotDue
		}
	default:
		return errNotDue
	}
	_, err = tx.Exec(`UPDATE _svc_workflow_runs SET state = 'running', executions = executions + 1, wake_at = 0,
		updated = max(?, updated) WHERE id = ?`, c.Now, c.Run)
	return err
}

// applySleep parks the run until WakeAt; the sleep step is recorded as
// sleeping.
func applySleep(tx *fsm.Tx, c *transitionCmd) error {
	if _, err := tx.Exec(`INSERT INTO _svc_workflow_steps (run_id, name, kind, state, wake_at, created, updated)
		VALUES (?, ?, 'sleep', 'sleeping', ?, ?, ?)
		ON CONFLICT (run_id, name) DO UPDATE SET state = 'sleeping', wake_at = excluded.wake_at, updated = excluded.updated
		WHERE kind = 'sleep' AND state != 'completed'`, c.Run, c.Step, c.WakeAt, c.Now, c.Now); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_workflow_deliveries WHERE run_id = ?`, c.Run); err != nil {
		return err
	}
	_, err := tx.Exec(`UPDATE _svc_workflow_runs SET state = 'sleeping', wake_at = ?, wait_step = NULL, wait_event = NULL,
		wait_key = NULL, updated = max(?, updated) WHERE id = ?`, c.WakeAt, c.Now, c.Run)
	return err
}

// applyWait parks the run until an event is delivered to it (or its
// timeout, kept from the step's first park, passes). The deliveries its
// match functions refused, and any for another step, are dropped.
func applyWait(tx *fsm.Tx, c *transitionCmd) error {
	if _, err := tx.Exec(`INSERT INTO _svc_workflow_steps (run_id, name, kind, state, wake_at, event, wait_key, created, updated)
		VALUES (?, ?, 'wait', 'waiting', ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, name) DO UPDATE SET state = 'waiting', event = excluded.event, wait_key = excluded.wait_key,
		updated = excluded.updated WHERE kind = 'wait' AND state != 'completed'`,
		c.Run, c.Step, c.WakeAt, c.Event, c.Key, c.Now, c.Now); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_workflow_deliveries WHERE run_id = ? AND (seq <= ? OR step != ?)`,
		c.Run, c.Checked, c.Step); err != nil {
		return err
	}
	_, err := tx.Exec(`UPDATE _svc_workflow_runs SET state = 'waiting', wait_step = ?, wait_event = ?, wait_key = ?,
		wake_at = COALESCE((SELECT wake_at FROM _svc_workflow_steps WHERE run_id = ? AND name = ?), 0),
		updated = max(?, updated) WHERE id = ?`, c.Step, c.Event, c.Key, c.Run, c.Step, c.Now, c.Run)
	if err == nil {
		// Deliveries newer than the ones checked make it due again.
		tx.Emit(fsm.Event{Kind: evRunnable, Subject: c.Run})
	}
	return err
}

// finish ends run id in state (completed or failed), setting column
// (output or error) to value.
func finish(tx *fsm.Tx, id, state, column, value string, now int64) error {
	if _, err := tx.Exec(`DELETE FROM _svc_workflow_deliveries WHERE run_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.Exec(`UPDATE _svc_workflow_runs SET state = ?, `+column+` = ?, wake_at = 0, wait_step = NULL,
		wait_event = NULL, wait_key = NULL, finished = ?, updated = max(?, updated) WHERE id = ?`,
		state, value, now, now, id)
	return err
}

// applyRetry moves a failed run back to running: its failed step loses
// its memo (it runs again with fresh attempts), the others keep theirs.
func applyRetry(tx *fsm.Tx, c *transitionCmd) error {
	var state string
	err := tx.QueryRow(`SELECT state FROM _svc_workflow_runs WHERE id = ?`, c.Run).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return errNoRun
	}
	if err != nil {
		return err
	}
	if state != "failed" {
		return errNotFailed
	}
	if _, err := tx.Exec(`DELETE FROM _svc_workflow_steps WHERE run_id = ? AND state IN ('failed', 'retrying')`, c.Run); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE _svc_workflow_runs SET state = 'running', error = NULL, output = NULL, finished = NULL,
		updated = max(?, updated) WHERE id = ?`, c.Now, c.Run); err != nil {
		return err
	}
	tx.Emit(fsm.Event{Kind: evRunnable, Subject: c.Run})
	return nil
}
