package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/dop251/goja"

	"svcd/engine"
	"svcd/fsm"
)

// maxAdvances bounds the advances of one execution; a run with more steps
// than that is claimed again by the next pass of the executor's loop.
const maxAdvances = 1000

// DueRuns lists up to limit runs the leader should execute now: running
// ones (just started or retried, or left by an executor that died),
// sleeping ones past their wake time, waiting ones with an event
// delivered or their timeout passed. next is the earliest wake time still
// ahead (zero: none).
func (m *Workflows) DueRuns(ctx context.Context, limit int) (ids []string, next time.Time, err error) {
	if !m.core.Migrated() {
		return nil, time.Time{}, nil
	}
	now := m.core.Now().Unix()
	err = m.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		// The state index keeps finished runs out of the scan.
		rows, err := r.Query(`SELECT id FROM _svc_workflow_runs r WHERE state IN ('running', 'sleeping', 'waiting')
			AND (state = 'running' OR (state = 'sleeping' AND wake_at <= ?)
				OR (state = 'waiting' AND ((wake_at > 0 AND wake_at <= ?)
					OR EXISTS (SELECT 1 FROM _svc_workflow_deliveries d WHERE d.run_id = r.id))))
			ORDER BY updated, id LIMIT ?`, now, now, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		var wake sql.NullInt64
		if err := r.QueryRow(`SELECT min(wake_at) FROM _svc_workflow_runs WHERE state IN ('sleeping', 'waiting')
			AND wake_at > ?`, now).Scan(&wake); err != nil {
			return err
		}
		if wake.Valid {
			next = time.Unix(wake.Int64, 0)
		}
		return nil
	})
	return ids, next, err
}

// ExecuteRun claims run id and advances it until it parks, completes or
// fails. A run that is not due, or that another execution claimed, is
// left alone (nil). Call it on the leader only (scheduler.Workflows).
func (m *Workflows) ExecuteRun(ctx context.Context, id string) error {
	var execs int64
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT executions FROM _svc_workflow_runs WHERE id = ?`, id).Scan(&execs)
	})
	if errIsNoRows(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, _, err = m.core.Propose(ctx, cmdTransition, transitionCmd{Op: opClaim, Run: id, Exec: execs, Now: m.core.Now().Unix()})
	if err != nil {
		return quiet(err)
	}
	for range maxAdvances {
		more, err := m.advanceOnce(ctx, id, execs+1)
		if err != nil || !more {
			return quiet(err)
		}
	}
	return nil
}

// quiet drops the refusals an executor expects (the run moved on, is
// gone or not due) and leadership ending mid-way.
func quiet(err error) error {
	if errors.Is(err, errStale) || errors.Is(err, errNotDue) || errors.Is(err, errNoRun) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// loadedRun is what an advance reads: the run, its workflow's code, its
// memos and deliveries, in one read transaction.
type loadedRun struct {
	id, workflow, state, code, input string
	executions                       int64
	steps                            map[string]*memo
	deliveries                       []delivery
}

// loadRun reads run id, or nil when it is gone.
func (m *Workflows) loadRun(ctx context.Context, id string) (*loadedRun, error) {
	var run *loadedRun
	err := m.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		x := &loadedRun{id: id, steps: map[string]*memo{}}
		err := r.QueryRow(`SELECT r.workflow, r.state, r.input, r.executions, w.code FROM _svc_workflow_runs r
			JOIN _svc_workflows w ON w.name = r.workflow WHERE r.id = ?`, id).
			Scan(&x.workflow, &x.state, &x.input, &x.executions, &x.code)
		if errIsNoRows(err) {
			return nil
		}
		if err != nil {
			return err
		}
		rows, err := r.Query(`SELECT name, kind, state, COALESCE(result, 'null'), attempts, wake_at
			FROM _svc_workflow_steps WHERE run_id = ?`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var name string
			s := &memo{}
			if err := rows.Scan(&name, &s.kind, &s.state, &s.result, &s.attempts, &s.wakeAt); err != nil {
				rows.Close()
				return err
			}
			x.steps[name] = s
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = r.Query(`SELECT seq, step, event, event_key, payload FROM _svc_workflow_deliveries
			WHERE run_id = ? ORDER BY seq`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d delivery
			var key sql.NullString
			if err := rows.Scan(&d.seq, &d.step, &d.event, &key, &d.payload); err != nil {
				return err
			}
			d.key = nullable(key)
			x.deliveries = append(x.deliveries, d)
		}
		run = x
		return rows.Err()
	})
	return run, err
}

// advanceOnce re-executes run id's code as execution exec and proposes
// what it did. more: the run advanced and goes on (a step was recorded).
func (m *Workflows) advanceOnce(ctx context.Context, id string, exec int64) (more bool, err error) {
	run, err := m.loadRun(ctx, id)
	if err != nil || run == nil || run.state != "running" || run.executions != exec {
		return false, err
	}
	a := newAdvance(m, run, exec, m.core.Now())
	val, runErr := m.runner.RunWorkflow(ctx, run.workflow, run.code, func(rt *goja.Runtime) map[string]any {
		return a.vars(rt)
	})
	if ctx.Err() != nil {
		// Leadership ended: the next leader claims the run again.
		return false, ctx.Err()
	}
	return a.commit(ctx, val, runErr)
}

// vars are the members of the code's ctx: step and input (parsed from
// its JSON on the runtime, so the code sees plain JavaScript values). A
// member that cannot be built is left out and logged: the code then
// fails on it like on any undefined name.
func (a *advance) vars(rt *goja.Runtime) map[string]any {
	out := map[string]any{}
	step, err := a.stepObject(rt)
	if err != nil {
		a.m.log.Error("workflows: cannot build the step object", "err", err)
	} else {
		out["step"] = step
	}
	parse, _ := goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	if input, err := parse(goja.Undefined(), rt.ToValue(a.run.input)); err == nil {
		out["input"] = input
	} else {
		a.m.log.Error("workflows: cannot parse a run's input", "run", a.run.id, "err", err)
	}
	return out
}

// commit proposes what the advance did, in this order of precedence: the
// steps it recorded (then the run goes on, unless one failed it), a
// park, the function's end (completed), the step functions the budget
// cut short (failed attempts), or the failure of the code outside steps.
func (a *advance) commit(ctx context.Context, val any, runErr error) (bool, error) {
	m := a.m
	if runErr != nil && len(a.recorded) == 0 && a.park == nil && len(a.inFlight) > 0 {
		a.interrupted(runErr.Error())
	}
	switch {
	case len(a.recorded) > 0:
		for _, c := range a.recorded {
			if _, _, err := m.core.Propose(ctx, cmdStep, c); err != nil {
				return false, err
			}
			m.log.Debug("workflow step recorded", "workflow", a.run.workflow, "run", a.run.id, "step", c.Step,
				"outcome", c.Outcome, "attempts", c.Attempts)
			if c.Outcome == outFailed {
				m.log.Info("workflow run failed", "workflow", a.run.workflow, "run", a.run.id, "step", c.Step, "err", c.Error)
				return false, nil
			}
		}
		return true, nil
	case a.park != nil:
		_, _, err := m.core.Propose(ctx, cmdTransition, *a.park)
		return false, err
	case runErr == nil:
		out, err := outputJSON(val)
		if err != nil {
			return false, a.failRun(ctx, err.Error())
		}
		_, _, err = m.core.Propose(ctx, cmdTransition, transitionCmd{Op: opComplete, Run: a.run.id, Exec: a.exec, Output: out, Now: a.now})
		if err == nil {
			m.log.Debug("workflow run completed", "workflow", a.run.workflow, "run", a.run.id)
		}
		return false, err
	default:
		return false, a.failRun(ctx, runErr.Error())
	}
}

// failRun fails the run with msg (the code threw outside a step, ran past
// its budget, or returned what is not JSON).
func (a *advance) failRun(ctx context.Context, msg string) error {
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	a.m.log.Info("workflow run failed", "workflow", a.run.workflow, "run", a.run.id, "err", msg)
	_, _, err := a.m.core.Propose(ctx, cmdTransition, transitionCmd{Op: opFail, Run: a.run.id, Exec: a.exec, Error: msg, Now: a.now})
	return err
}

// outputJSON is the function's return value as JSON.
func outputJSON(v any) (json.RawMessage, error) {
	b, err := jsonValue("output", v)
	if err != nil {
		if e := engine.AsError(err); e != nil {
			return nil, errors.New("the workflow's return value " + e.Details["output"].(string))
		}
		return nil, err
	}
	return b, nil
}
