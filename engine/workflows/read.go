package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Run is a run as the admin API shows it.
type Run struct {
	ID       string          `json:"id"`
	Workflow string          `json:"workflow"`
	State    string          `json:"state"`
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
	Error    *string         `json:"error"`
	// Executions counts the times an executor claimed the run.
	Executions int64 `json:"executions"`
	// WakeAt: when a sleeping run wakes, or a waiting one stops waiting.
	WakeAt *int64 `json:"wake_at"`
	// Waiting is the pending waitForEvent of a waiting run.
	Waiting  *Waiting `json:"waiting"`
	Steps    []Step   `json:"steps"`
	Created  int64    `json:"created"`
	Updated  int64    `json:"updated"`
	Finished *int64   `json:"finished"`
}

// Waiting is what a waiting run waits for (Key nil: any key).
type Waiting struct {
	Step  string  `json:"step"`
	Event string  `json:"event"`
	Key   *string `json:"key"`
}

// Step is one step of a run, in the order it was first recorded.
type Step struct {
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	State    string          `json:"state"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Attempts int64           `json:"attempts,omitempty"`
	WakeAt   int64           `json:"wake_at,omitempty"`
	Event    string          `json:"event,omitempty"`
	Key      *string         `json:"key,omitempty"`
	Created  int64           `json:"created"`
	Updated  int64           `json:"updated"`
}

// RunPage is one page of a workflow's runs, newest first.
type RunPage struct {
	Runs       []Run
	Page       int
	PerPage    int
	TotalItems int
	TotalPages int
}

// runStates are the states a run can be in (SPEC.md).
var runStates = map[string]bool{"running": true, "sleeping": true, "waiting": true, "completed": true, "failed": true}

const runCols = `id, workflow, state, input, output, error, executions, wake_at, wait_step, wait_event, wait_key,
	created, updated, finished`

// GetRun returns run id with its steps.
func (m *Workflows) GetRun(ctx context.Context, id string) (*Run, error) {
	var run *Run
	err := m.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		runs, err := scanRuns(r, `SELECT `+runCols+` FROM _svc_workflow_runs WHERE id = ?`, id)
		if err != nil || len(runs) == 0 {
			return err
		}
		run = &runs[0]
		return attachSteps(r, runs)
	})
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, errNoRun
	}
	return run, nil
}

// ListRuns returns a page of the runs of workflow name, newest first,
// in state when it is set. page counts from 1; perPage is 1 to 500
// (default 30).
func (m *Workflows) ListRuns(ctx context.Context, name, state string, page, perPage int) (*RunPage, error) {
	if state != "" && !runStates[state] {
		return nil, engine.FieldError("state", "must be one of running, sleeping, waiting, completed, failed")
	}
	if page < 1 {
		page = 1
	}
	if perPage < 1 {
		perPage = 30
	}
	perPage = min(perPage, 500)
	out := &RunPage{Runs: []Run{}, Page: page, PerPage: perPage}
	err := m.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		w, err := readWorkflow(r, name)
		if err != nil {
			return err
		}
		if w == nil {
			return errNoWorkflow
		}
		where, args := `workflow = ?`, []any{name}
		if state != "" {
			where, args = where+` AND state = ?`, append(args, state)
		}
		if err := r.QueryRow(`SELECT count(*) FROM _svc_workflow_runs WHERE `+where, args...).Scan(&out.TotalItems); err != nil {
			return err
		}
		out.TotalPages = (out.TotalItems + perPage - 1) / perPage
		runs, err := scanRuns(r, `SELECT `+runCols+` FROM _svc_workflow_runs WHERE `+where+
			` ORDER BY created DESC, rowid DESC LIMIT ? OFFSET ?`, append(args, perPage, (page-1)*perPage)...)
		if err != nil {
			return err
		}
		out.Runs = runs
		return attachSteps(r, runs)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanRuns reads runs (without their steps).
func scanRuns(r *fsm.Reader, q string, args ...any) ([]Run, error) {
	rows, err := r.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Run{}
	for rows.Next() {
		var run Run
		var input string
		var output, errText, waitStep, waitEvent, waitKey sql.NullString
		var wake int64
		var finished sql.NullInt64
		if err := rows.Scan(&run.ID, &run.Workflow, &run.State, &input, &output, &errText, &run.Executions, &wake,
			&waitStep, &waitEvent, &waitKey, &run.Created, &run.Updated, &finished); err != nil {
			return nil, err
		}
		run.Input = json.RawMessage(input)
		if output.Valid {
			run.Output = json.RawMessage(output.String)
		}
		if errText.Valid {
			run.Error = &errText.String
		}
		if wake > 0 {
			run.WakeAt = &wake
		}
		if waitEvent.Valid {
			run.Waiting = &Waiting{Step: waitStep.String, Event: waitEvent.String, Key: nullable(waitKey)}
		}
		if finished.Valid {
			run.Finished = &finished.Int64
		}
		run.Steps = []Step{}
		out = append(out, run)
	}
	return out, rows.Err()
}

// attachSteps reads the steps of runs into them.
func attachSteps(r *fsm.Reader, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	byID := make(map[string]*Run, len(runs))
	args := make([]any, len(runs))
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
		args[i] = runs[i].ID
	}
	rows, err := r.Query(`SELECT run_id, name, kind, state, result, error, attempts, wake_at, event, wait_key, created, updated
		FROM _svc_workflow_steps WHERE run_id IN (?`+strings.Repeat(", ?", len(runs)-1)+`) ORDER BY rowid`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var runID string
		var s Step
		var result, errText, event, key sql.NullString
		if err := rows.Scan(&runID, &s.Name, &s.Kind, &s.State, &result, &errText, &s.Attempts, &s.WakeAt,
			&event, &key, &s.Created, &s.Updated); err != nil {
			return err
		}
		if result.Valid {
			s.Result = json.RawMessage(result.String)
		}
		s.Error, s.Event, s.Key = errText.String, event.String, nullable(key)
		run := byID[runID]
		run.Steps = append(run.Steps, s)
	}
	return rows.Err()
}

// nullable is s as a pointer, nil when NULL.
func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// errIsNoRows reports sql.ErrNoRows.
func errIsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
