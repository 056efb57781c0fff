package queue

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// CronJob is a scheduled job (CONTRACT.md's job): a cron schedule or a
// one-off run_at, run inline on the leader or through a queue. Times are
// unix seconds.
type CronJob struct {
	ID   string  `json:"id"`
	Name string  `json:"name"`
	Cron *string `json:"cron"`
	// RunAt is a one-off job's time; it fires once and is disabled.
	RunAt *int64 `json:"run_at"`
	// Mode is "inline" (the code runs on the leader) or "worker:<queue>"
	// (each firing enqueues a job on the queue; the job's code is not run).
	Mode    string `json:"mode"`
	Code    string `json:"code"`
	Enabled bool   `json:"enabled"`
	// CatchUp is how many missed firings (a leader was down or busy) run
	// after all; 0 skips them.
	CatchUp   int64  `json:"catch_up"`
	LastRunAt *int64 `json:"last_run_at"`
	NextRunAt *int64 `json:"next_run_at"`
	Created   int64  `json:"created"`
	Updated   int64  `json:"updated"`
}

// CronJobInput is a job as an admin sends it: on create, name and one of
// cron and run_at are required (code too in inline mode); on update only
// the members sent change, and sending cron or run_at replaces the other.
type CronJobInput struct {
	Name    *string `json:"name"`
	Cron    *string `json:"cron"`
	RunAt   *int64  `json:"run_at"`
	Mode    *string `json:"mode"`
	Code    *string `json:"code"`
	Enabled *bool   `json:"enabled"`
	CatchUp *int64  `json:"catch_up"`
}

// Modes of a job.
const (
	ModeInline       = "inline"
	modeWorkerPrefix = "worker:"
)

// Bounds of a job.
const (
	maxNameLen = 100
	MaxCatchUp = 1000
	// Grace is how late a firing may start and still count as on time: a
	// scheduled time older than that when the leader reaches it is
	// missed (skipped, unless the job has catch_up). A one-off run_at may
	// not be older than that when saved.
	Grace = 60 * time.Second
)

// WorkerQueue is the queue of mode "worker:<queue>", or "".
func WorkerQueue(mode string) string {
	if q, ok := strings.CutPrefix(mode, modeWorkerPrefix); ok {
		return q
	}
	return ""
}

// cronRow is a job as the leader's firer reads it: the row and the
// fields the firing checks.
type cronRow struct {
	CronJob
	lastScheduled int64
	version       int64
}

const cronCols = `id, name, cron, run_at, mode, code, enabled, catch_up, last_run_at, next_run_at, created, updated,
	last_scheduled_at, version`

func scanCron(scan func(dest ...any) error) (*cronRow, error) {
	var (
		r                          cronRow
		cronExpr, runAt, last, nxt any
	)
	if err := scan(&r.ID, &r.Name, &cronExpr, &runAt, &r.Mode, &r.Code, &r.Enabled, &r.CatchUp, &last, &nxt,
		&r.Created, &r.Updated, &r.lastScheduled, &r.version); err != nil {
		return nil, err
	}
	r.Cron, r.RunAt, r.LastRunAt, r.NextRunAt = anyString(cronExpr), anyInt(runAt), anyInt(last), anyInt(nxt)
	return &r, nil
}

// CronJobs lists every job, by name.
func (q *Queue) CronJobs(ctx context.Context) ([]CronJob, error) {
	rows, err := q.cronRows(ctx, `1`)
	out := make([]CronJob, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.CronJob)
	}
	return out, err
}

// cronRows reads the jobs that where (SQL) selects, by name.
func (q *Queue) cronRows(ctx context.Context, where string, args ...any) ([]*cronRow, error) {
	var out []*cronRow
	err := q.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT `+cronCols+` FROM _svc_jobs WHERE `+where+` ORDER BY name`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanCron(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, j)
		}
		return rows.Err()
	})
	return out, err
}

// CronJob reads job id.
func (q *Queue) CronJob(ctx context.Context, id string) (*CronJob, error) {
	rows, err := q.cronRows(ctx, `id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errCronNotFound
	}
	return &rows[0].CronJob, nil
}

type jobCmd struct {
	Op  string  `json:"op"`
	Job CronJob `json:"job"`
}

// CreateCronJob adds a job.
func (q *Queue) CreateCronJob(ctx context.Context, in CronJobInput) (*CronJob, uint64, error) {
	now := q.core.Now()
	j := CronJob{ID: "job_" + engine.NewID(), Mode: ModeInline, Enabled: true, Created: now.Unix(), Updated: now.Unix()}
	bad := map[string]string{}
	if in.Name == nil {
		bad["name"] = "is required"
	}
	if in.Cron == nil && in.RunAt == nil {
		bad["cron"] = "one of cron and run_at is required"
	}
	if err := q.mergeCronJob(&j, in, now, 0, bad); err != nil {
		return nil, 0, err
	}
	return q.proposeCronJob(ctx, opCreate, j)
}

// UpdateCronJob changes the members of job id that in sends; its next
// run is computed again from now.
func (q *Queue) UpdateCronJob(ctx context.Context, id string, in CronJobInput) (*CronJob, uint64, error) {
	rows, err := q.cronRows(ctx, `id = ?`, id)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) == 0 {
		return nil, 0, errCronNotFound
	}
	cur := rows[0].CronJob
	now := q.core.Now()
	cur.Updated = max(now.Unix(), cur.Updated)
	if err := q.mergeCronJob(&cur, in, now, rows[0].lastScheduled, map[string]string{}); err != nil {
		return nil, 0, err
	}
	return q.proposeCronJob(ctx, opUpdate, cur)
}

// DeleteCronJob removes job id and its runs. Queue jobs its firings
// enqueued stay.
func (q *Queue) DeleteCronJob(ctx context.Context, id string) (uint64, error) {
	_, idx, err := q.core.Propose(ctx, cmdJob, jobCmd{Op: opDelete, Job: CronJob{ID: id}})
	return idx, err
}

func (q *Queue) proposeCronJob(ctx context.Context, op string, j CronJob) (*CronJob, uint64, error) {
	v, idx, err := q.core.Propose(ctx, cmdJob, jobCmd{Op: op, Job: j})
	if err != nil {
		return nil, idx, err
	}
	return v.(*CronJob), idx, nil
}

// mergeCronJob applies in to j, validates the result and computes its
// next run from now: a validation error when something is wrong (bad may
// hold problems found before). lastScheduled is the newest scheduled time
// the job fired (a one-off's run_at must be later).
func (q *Queue) mergeCronJob(j *CronJob, in CronJobInput, now time.Time, lastScheduled int64, bad map[string]string) error {
	if in.Name != nil {
		j.Name = strings.TrimSpace(*in.Name)
		if j.Name == "" || len(j.Name) > maxNameLen {
			bad["name"] = "must be 1 to 100 characters"
		}
	}
	switch {
	case in.Cron != nil && in.RunAt != nil:
		bad["cron"] = "give cron or run_at, not both"
	case in.Cron != nil:
		expr := strings.Join(strings.Fields(*in.Cron), " ")
		j.Cron, j.RunAt = &expr, nil
		if _, err := parseSchedule(expr, q.core.SettingBool(settingSeconds)); err != nil {
			bad["cron"] = err.Error()
		}
	case in.RunAt != nil:
		at := *in.RunAt
		j.Cron, j.RunAt = nil, &at
	}
	if in.Mode != nil {
		j.Mode = *in.Mode
	}
	if j.Mode != ModeInline && !ValidQueueName(WorkerQueue(j.Mode)) {
		bad["mode"] = `must be "inline" or "worker:<queue>" naming a valid queue`
	}
	if in.Code != nil {
		j.Code = *in.Code
	}
	if j.Mode == ModeInline || strings.TrimSpace(j.Code) != "" {
		if msg := q.checkCode(j.Code); msg != "" {
			bad["code"] = msg
		}
	}
	if in.Enabled != nil {
		j.Enabled = *in.Enabled
	}
	if in.CatchUp != nil {
		j.CatchUp = *in.CatchUp
		if j.CatchUp < 0 || j.CatchUp > MaxCatchUp {
			bad["catch_up"] = "must be an integer from 0 to 1000"
		}
	}
	if j.RunAt != nil && j.Enabled && (in.RunAt != nil || in.Enabled != nil) {
		switch {
		case *j.RunAt <= lastScheduled:
			bad["run_at"] = "the job fired at this time already: give a new run_at"
		case *j.RunAt < now.Add(-Grace).Unix():
			bad["run_at"] = "must not be in the past"
		}
	}
	if len(bad) > 0 {
		return engine.ValidationError(bad)
	}
	j.NextRunAt = nil
	if !j.Enabled {
		return nil
	}
	if j.RunAt != nil {
		at := *j.RunAt
		j.NextRunAt = &at
		return nil
	}
	s, err := schedule(*j.Cron)
	if err != nil {
		return engine.FieldError("cron", err.Error())
	}
	if next := nextAfter(s, now); !next.IsZero() {
		n := next.Unix()
		j.NextRunAt = &n
	}
	return nil
}

func (q *Queue) applyJob(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[jobCmd](cmd)
	if err != nil {
		return nil, err
	}
	j := c.Job
	if c.Op == opDelete {
		res, err := tx.Exec(`DELETE FROM _svc_jobs WHERE id = ?`, j.ID)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return nil, engine.FirstErr(err, errCronNotFound)
		}
		_, err = tx.Exec(`DELETE FROM _svc_job_runs WHERE job_id = ?`, j.ID)
		return nil, err
	}
	var other string
	err = tx.QueryRow(`SELECT id FROM _svc_jobs WHERE name = ? AND id != ?`, j.Name, j.ID).Scan(&other)
	if err == nil {
		return nil, errNameTaken
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	switch c.Op {
	case opCreate:
		_, err = tx.Exec(`INSERT INTO _svc_jobs (id, name, cron, run_at, mode, code, enabled, catch_up, next_run_at,
			last_scheduled_at, version, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1, ?, ?)`,
			j.ID, j.Name, j.Cron, j.RunAt, j.Mode, j.Code, j.Enabled, j.CatchUp, j.NextRunAt, j.Created, j.Updated)
		if err != nil {
			return nil, err
		}
	case opUpdate:
		res, err := tx.Exec(`UPDATE _svc_jobs SET name = ?, cron = ?, run_at = ?, mode = ?, code = ?, enabled = ?, catch_up = ?,
			next_run_at = ?, version = version + 1, updated = ? WHERE id = ?`,
			j.Name, j.Cron, j.RunAt, j.Mode, j.Code, j.Enabled, j.CatchUp, j.NextRunAt, j.Updated, j.ID)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return nil, engine.FirstErr(err, errCronNotFound)
		}
	default:
		return nil, errors.New("jobs.save: unknown operation " + c.Op)
	}
	return readCronTx(tx, j.ID)
}

// readCronTx reads job id inside an apply.
func readCronTx(tx *fsm.Tx, id string) (*CronJob, error) {
	r, err := scanCron(tx.QueryRow(`SELECT `+cronCols+` FROM _svc_jobs WHERE id = ?`, id).Scan)
	if err != nil {
		return nil, err
	}
	return &r.CronJob, nil
}
