package workflows

import (
	"database/sql"
	"errors"
	"fmt"

	"svcd/engine"
	"svcd/fsm"
)

// applyStep records what a step did (stepCmd), fenced like the run's
// other commands. A memo, once completed, never changes: recording a step
// that has one is a no-op, so a step recorded twice keeps its first
// result.
func (m *Workflows) applyStep(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[stepCmd](cmd)
	if err != nil {
		return nil, err
	}
	if err := fenced(tx, c.Run, c.Exec); err != nil {
		return nil, err
	}
	switch c.Outcome {
	case outCompleted, outRetrying, outFailed:
		return nil, recordRun(tx, c)
	case outMatched:
		return nil, recordMatch(tx, c)
	case outTimedOut:
		return nil, recordTimeout(tx, c)
	}
	return nil, fmt.Errorf("%w: workflows.step: unknown outcome %q", fsm.ErrHalt, c.Outcome)
}

// recordRun records an attempt of a step.run: its result, or its error
// (retrying, or failed: the run fails with it).
func recordRun(tx *fsm.Tx, c *stepCmd) error {
	var result, errText any
	if c.Outcome == outCompleted {
		result = "null"
		if len(c.Result) > 0 {
			result = string(c.Result)
		}
	} else {
		errText = c.Error
	}
	if _, err := tx.Exec(`INSERT INTO _svc_workflow_steps (run_id, name, kind, state, result, error, attempts, created, updated)
		VALUES (?, ?, 'run', ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, name) DO UPDATE SET state = excluded.state, result = excluded.result, error = excluded.error,
		attempts = excluded.attempts, updated = excluded.updated WHERE kind = 'run' AND state != 'completed'`,
		c.Run, c.Step, c.Outcome, result, errText, c.Attempts, c.Now, c.Now); err != nil {
		return err
	}
	if c.Outcome != outFailed {
		return nil
	}
	return finish(tx, c.Run, "failed", "error", fmt.Sprintf("step %q failed after %d attempts: %s", c.Step, c.Attempts, c.Error), c.Now)
}

// recordMatch completes a waiting step with the payload of the delivery
// its match function accepted; the run waits no more.
func recordMatch(tx *fsm.Tx, c *stepCmd) error {
	var payload string
	err := tx.QueryRow(`SELECT payload FROM _svc_workflow_deliveries WHERE run_id = ? AND seq = ? AND step = ?`,
		c.Run, c.Delivery, c.Step).Scan(&payload)
	if errors.Is(err, sql.ErrNoRows) {
		return errStale
	}
	if err != nil {
		return err
	}
	return completeWait(tx, c, payload)
}

// recordTimeout completes a waiting step whose timeout passed with null.
func recordTimeout(tx *fsm.Tx, c *stepCmd) error {
	var wake int64
	err := tx.QueryRow(`SELECT wake_at FROM _svc_workflow_steps WHERE run_id = ? AND name = ? AND kind = 'wait'
		AND state = 'waiting'`, c.Run, c.Step).Scan(&wake)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (wake == 0 || wake > c.Now)) {
		return errStale
	}
	if err != nil {
		return err
	}
	return completeWait(tx, c, "null")
}

// completeWait completes waiting step c.Step with result and clears the
// run's wait.
func completeWait(tx *fsm.Tx, c *stepCmd, result string) error {
	res, err := tx.Exec(`UPDATE _svc_workflow_steps SET state = 'completed', result = ?, updated = max(?, updated)
		WHERE run_id = ? AND name = ? AND kind = 'wait' AND state = 'waiting'`, result, c.Now, c.Run, c.Step)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return engine.FirstErr(err, errStale)
	}
	if _, err := tx.Exec(`DELETE FROM _svc_workflow_deliveries WHERE run_id = ?`, c.Run); err != nil {
		return err
	}
	_, err = tx.Exec(`UPDATE _svc_workflow_runs SET wait_step = NULL, wait_event = NULL, wait_key = NULL,
		updated = max(?, updated) WHERE id = ?`, c.Now, c.Run)
	return err
}
