package queue

import (
	"context"
	"encoding/json"
	"strconv"

	"svcd/engine"
	"svcd/fsm"
)

// Run states of a scheduled job's run.
const (
	// RunPending: an admin's run-now of an inline job, not started yet.
	RunPending = "pending"
	// RunRunning: the leader runs the code now.
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	// RunLost: the leader stopped before the run ended; it is not run
	// again (inline runs are at most once).
	RunLost = "lost"
	// RunEnqueued: a worker-mode firing enqueued its queue job (which the
	// queue runs at least once).
	RunEnqueued = "enqueued"
	// RunMissed: a one-off job's time passed while no leader could fire
	// it (and it has no catch_up); it is disabled.
	RunMissed = "missed"
)

// Run is one firing of a scheduled job. Key is the scheduled time in unix
// seconds, or "manual-<uuid>" for a run-now. Times are unix seconds.
type Run struct {
	Job         string          `json:"job"`
	Key         string          `json:"key"`
	ScheduledAt int64           `json:"scheduled_at"`
	Manual      bool            `json:"manual"`
	State       string          `json:"state"`
	QueueJobID  *string         `json:"queue_job_id"`
	Node        *string         `json:"node"`
	Error       *string         `json:"error"`
	Result      json.RawMessage `json:"result"`
	FiredAt     int64           `json:"fired_at"`
	StartedAt   *int64          `json:"started_at"`
	FinishedAt  *int64          `json:"finished_at"`
}

const runCols = `job_id, key, scheduled_at, manual, state, queue_job_id, node, error, result, fired_ms, started_ms, finished_ms`

func scanRun(scan func(dest ...any) error) (*Run, error) {
	var (
		r                             Run
		fired                         int64
		qj, node, errText, res, st, f any
	)
	if err := scan(&r.Job, &r.Key, &r.ScheduledAt, &r.Manual, &r.State, &qj, &node, &errText, &res, &fired, &st, &f); err != nil {
		return nil, err
	}
	r.QueueJobID, r.Node, r.Error = anyString(qj), anyString(node), anyString(errText)
	if s := anyString(res); s != nil {
		r.Result = json.RawMessage(*s)
	}
	r.FiredAt, r.StartedAt, r.FinishedAt = seconds(fired), anySeconds(st), anySeconds(f)
	return &r, nil
}

// readRunTx reads run key of job inside an apply.
func readRunTx(tx *fsm.Tx, job, key string) (*Run, error) {
	return scanRun(tx.QueryRow(`SELECT `+runCols+` FROM _svc_job_runs WHERE job_id = ? AND key = ?`, job, key).Scan)
}

// RunPage is one page of a job's runs, newest first.
type RunPage struct {
	Data       []Run `json:"data"`
	Page       int   `json:"page"`
	PerPage    int   `json:"perPage"`
	TotalItems int   `json:"totalItems"`
	TotalPages int   `json:"totalPages"`
}

// keptRuns is how many finished runs a job keeps (older ones go as new
// ones are fired).
const keptRuns = 100

// Runs lists a page of job id's runs, newest first.
func (q *Queue) Runs(ctx context.Context, id string, page, perPage int) (*RunPage, error) {
	if _, err := q.CronJob(ctx, id); err != nil {
		return nil, err
	}
	page, perPage = pageBounds(page, perPage)
	out := &RunPage{Data: []Run{}, Page: page, PerPage: perPage}
	err := q.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		if err := r.QueryRow(`SELECT COUNT(*) FROM _svc_job_runs WHERE job_id = ?`, id).Scan(&out.TotalItems); err != nil {
			return err
		}
		rows, err := r.Query(`SELECT `+runCols+` FROM _svc_job_runs WHERE job_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`,
			id, perPage, (page-1)*perPage)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			run, err := scanRun(rows.Scan)
			if err != nil {
				return err
			}
			out.Data = append(out.Data, *run)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	out.TotalPages = (out.TotalItems + perPage - 1) / perPage
	return out, nil
}

// startCmd starts pending run Key of Job on node By.
type startCmd struct {
	Job   string `json:"job"`
	Key   string `json:"key"`
	By    string `json:"by"`
	Now   int64  `json:"now"`   // unix ms
	Until int64  `json:"until"` // unix ms: the run's claim end
}

func (q *Queue) applyStart(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[startCmd](cmd)
	if err != nil {
		return nil, err
	}
	res, err := tx.Exec(`UPDATE _svc_job_runs SET state = 'running', node = ?, claim_until_ms = ?, started_ms = ?
		WHERE job_id = ? AND key = ? AND state = 'pending'`, c.By, c.Until, c.Now, c.Job, c.Key)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return &fireResult{Reason: "not pending"}, err
	}
	run, err := readRunTx(tx, c.Job, c.Key)
	if err != nil {
		return nil, err
	}
	return &fireResult{Fired: true, Run: run}, nil
}

// finishCmd records how inline run Key of Job ended.
type finishCmd struct {
	Job    string          `json:"job"`
	Key    string          `json:"key"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Now    int64           `json:"now"` // unix ms
}

// FinishRun records how an inline run ended: succeeded with result, or
// failed with runErr. A run the reaper marked lost meanwhile gets its
// outcome too (it did run).
func (q *Queue) FinishRun(ctx context.Context, run InlineRun, result any, runErr error) error {
	c := finishCmd{Job: run.JobID, Key: run.Key, OK: runErr == nil, Now: q.core.Now().UnixMilli()}
	if runErr != nil {
		c.Error = clip(runErr.Error(), maxErrorBytes)
	} else {
		c.Result, c.Error = resultJSON(result)
	}
	_, _, err := q.core.Propose(ctx, cmdFinish, c)
	return err
}

func (q *Queue) applyFinish(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[finishCmd](cmd)
	if err != nil {
		return nil, err
	}
	state := RunSucceeded
	if !c.OK {
		state = RunFailed
	}
	var result, errText any
	if len(c.Result) > 0 {
		result = string(c.Result)
	}
	if c.Error != "" {
		errText = c.Error
	}
	_, err = tx.Exec(`UPDATE _svc_job_runs SET state = ?, result = ?, error = ?, finished_ms = ?
		WHERE job_id = ? AND key = ? AND state IN ('running', 'lost')`, state, result, errText, c.Now, c.Job, c.Key)
	return nil, err
}

// insertRun records a firing and keeps the job's newest keptRuns
// finished runs.
func insertRun(tx *fsm.Tx, job, key string, scheduledAt int64, manual bool, state string, queueJob, node *string, until *int64, now int64) error {
	var started any
	if state == RunRunning {
		started = now
	}
	if _, err := tx.Exec(`INSERT INTO _svc_job_runs (job_id, key, seq, scheduled_at, manual, state, queue_job_id, node,
		claim_until_ms, fired_ms, started_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		job, key, int64(tx.Index()), scheduledAt, manual, state, queueJob, node, until, now, started); err != nil {
		return err
	}
	_, err := tx.Exec(`DELETE FROM _svc_job_runs WHERE job_id = ? AND state NOT IN ('pending', 'running') AND seq <
		(SELECT seq FROM _svc_job_runs WHERE job_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`, job, job, keptRuns-1)
	return err
}

// scheduledKey is the run key of scheduled time t.
func scheduledKey(t int64) string { return strconv.FormatInt(t, 10) }
