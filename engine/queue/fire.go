package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"svcd/engine"
	"svcd/fsm"
)

// Kinds of firing.
const (
	fireScheduled = "scheduled"
	fireSkip      = "skip"
	fireManual    = "manual"
)

// fireCmd fires job Job for scheduled time ScheduledAt (unix seconds), or
// skips the missed times up to it, or records a run-now (Key). The apply
// refuses a scheduled firing of a job whose row moved on (Version), of a
// time at or before the last one fired, or of a disabled job: a firing is
// committed once per (job, scheduled time), whichever leader proposes it.
type fireCmd struct {
	Job     string `json:"job"`
	Kind    string `json:"kind"`
	Version int64  `json:"version"`
	// From is the job's next run the proposer saw (a scheduled firing or
	// a skip is refused when the row's is not that any more).
	From        int64 `json:"from,omitempty"`
	ScheduledAt int64 `json:"scheduled_at"`
	// Next is the job's next run after this command (unix seconds; nil:
	// none, a one-off).
	Next  *int64 `json:"next,omitempty"`
	Key   string `json:"key,omitempty"`
	By    string `json:"by,omitempty"`
	Now   int64  `json:"now"`             // unix ms
	Until int64  `json:"until,omitempty"` // unix ms: an inline run's claim end
	// QueueJob is what a worker-mode firing enqueues.
	QueueJob *newJob `json:"queue_job,omitempty"`
}

// fireResult says whether a firing (or a start) happened, and its run.
type fireResult struct {
	Fired  bool   `json:"fired"`
	Reason string `json:"reason,omitempty"`
	Run    *Run   `json:"run,omitempty"`
}

// errJobMoved is a run-now of a job that changed while it was proposed.
var errJobMoved = engine.Errorf(engine.KindConflict, "The job changed while the request was in flight; retry")

// InlineRun is a run the leader executes now: the job's code, with
// scheduledAt and jobId in its context.
type InlineRun struct {
	JobID       string
	Name        string
	Key         string
	Code        string
	ScheduledAt int64
	Manual      bool
	// UntilMs is the end of the run's claim (unix ms).
	UntilMs int64
}

// workerPayload is what a worker-mode firing enqueues.
type workerPayload struct {
	JobID       string `json:"jobId"`
	Name        string `json:"name"`
	ScheduledAt int64  `json:"scheduledAt"`
	Manual      bool   `json:"manual,omitempty"`
}

// RunNow fires job id now, for an admin (POST /admin/jobs/:id/run): a
// worker-mode job enqueues its queue job at once; an inline job's run is
// pending until the leader starts it. Next runs do not move.
func (q *Queue) RunNow(ctx context.Context, id string) (*Run, uint64, error) {
	rows, err := q.cronRows(ctx, `id = ?`, id)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) == 0 {
		return nil, 0, errCronNotFound
	}
	j := rows[0]
	now := q.core.Now()
	c := fireCmd{Job: j.ID, Kind: fireManual, Version: j.version, ScheduledAt: now.Unix(), Key: "manual-" + uuid.NewString(), Now: now.UnixMilli()}
	if qn := WorkerQueue(j.Mode); qn != "" {
		c.QueueJob = q.firingJob(j, qn, now.Unix(), true, now.UnixMilli())
	}
	v, idx, err := q.core.Propose(ctx, cmdFire, c)
	if err != nil {
		return nil, idx, err
	}
	return v.(*fireResult).Run, idx, nil
}

// firingJob is the queue job a worker-mode firing of j enqueues.
func (q *Queue) firingJob(j *cronRow, queue string, scheduledAt int64, manual bool, now int64) *newJob {
	payload, _ := json.Marshal(workerPayload{JobID: j.ID, Name: j.Name, ScheduledAt: scheduledAt, Manual: manual})
	return &newJob{ID: uuid.NewString(), Queue: queue, Payload: payload, Retries: DefaultRetries,
		Backoff: BackoffExponential, RetryDelayMs: DefaultRetryDelayMs, RunAfterMs: dueNow}
}

// FireDue fires, for node by, every job due on this replica's view at the
// engine's now, skips the firings missed beyond Grace (running up to a
// job's catch_up of them), and starts the pending run-nows: it answers
// the inline runs the caller must execute now, each committed once. The
// leader's firer calls it.
func (q *Queue) FireDue(ctx context.Context, by string) ([]InlineRun, error) {
	if !q.migrated() {
		return nil, nil
	}
	now := q.core.Now()
	due, err := q.cronRows(ctx, `enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?`, now.Unix())
	if err != nil {
		return nil, err
	}
	var out []InlineRun
	for _, j := range due {
		for _, c := range q.plan(j, now, by) {
			v, _, err := q.core.Propose(ctx, cmdFire, c)
			if err != nil {
				return out, err
			}
			if r := v.(*fireResult); r.Fired && c.Kind == fireScheduled && c.QueueJob == nil {
				out = append(out, InlineRun{JobID: j.ID, Name: j.Name, Key: r.Run.Key, Code: j.Code, ScheduledAt: c.ScheduledAt, UntilMs: c.Until})
			} else if !r.Fired {
				break // the row moved on: read it again next time
			}
		}
	}
	started, err := q.startPending(ctx, now, by)
	return append(out, started...), err
}

// plan is what firing j at now takes: the scheduled times due since its
// next run, of which the latest fires when it is at most Grace late and
// the catch_up newest missed ones fire too, oldest first; with nothing to
// fire, one skip moves the next run on.
func (q *Queue) plan(j *cronRow, now time.Time, by string) []fireCmd {
	base := fireCmd{Job: j.ID, Version: j.version, By: by, Now: now.UnixMilli(), Until: now.UnixMilli() + q.visibilityMs()}
	var due []int64
	var next *int64
	if j.RunAt != nil {
		due = []int64{*j.RunAt}
	} else {
		s, err := schedule(*j.Cron)
		if err != nil {
			q.log.Warn("jobs: a stored schedule does not parse; the job does not fire", "job", j.ID, "err", err)
			return nil
		}
		// Keep the catch_up+1 newest due times (a seconds schedule after a
		// long stop has many).
		keep := int(j.CatchUp) + 1
		t := time.Unix(*j.NextRunAt, 0).UTC()
		for n := 0; !t.IsZero() && !t.After(now) && n < maxDueScan; n++ {
			due = append(due, t.Unix())
			if len(due) > keep {
				due = due[1:]
			}
			t = nextAfter(s, t)
		}
		if !t.IsZero() && !t.After(now) {
			// Too many to count: everything so far is missed.
			t = nextAfter(s, now)
			due = nil
		}
		if !t.IsZero() {
			n := t.Unix()
			next = &n
		}
	}
	base.From = *j.NextRunAt
	for len(due) > 0 && due[0] <= j.lastScheduled {
		due = due[1:] // fired already (a one-off saved again with its old time)
	}
	if len(due) == 0 {
		c := base
		c.Kind, c.ScheduledAt, c.Next = fireSkip, *j.NextRunAt, next
		return []fireCmd{c}
	}
	latest := due[len(due)-1]
	onTime := now.Sub(time.Unix(latest, 0)) <= Grace
	missed := due[:len(due)-1]
	if !onTime {
		missed = due
	}
	if int64(len(missed)) > j.CatchUp {
		missed = missed[int64(len(missed))-j.CatchUp:]
	}
	fire := missed
	if onTime {
		fire = append(fire[:len(fire):len(fire)], latest)
	}
	if len(fire) == 0 {
		c := base
		c.Kind, c.ScheduledAt, c.Next = fireSkip, latest, next
		return []fireCmd{c}
	}
	out := make([]fireCmd, 0, len(fire))
	for i, t := range fire {
		c := base
		c.Kind, c.ScheduledAt, c.Next = fireScheduled, t, next
		if i > 0 {
			c.From = fire[i]
		}
		if i+1 < len(fire) {
			n := fire[i+1]
			c.Next = &n
		}
		if qn := WorkerQueue(j.Mode); qn != "" {
			c.QueueJob = q.firingJob(j, qn, t, false, c.Now)
		}
		out = append(out, c)
	}
	return out
}

// maxDueScan bounds the scheduled times counted after a stop (eleven
// days of a seconds schedule).
const maxDueScan = 1_000_000

// startPending starts the pending run-nows of inline jobs.
func (q *Queue) startPending(ctx context.Context, now time.Time, by string) ([]InlineRun, error) {
	type pending struct{ job, key, name, code string }
	var list []pending
	err := q.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT r.job_id, r.key, j.name, j.code FROM _svc_job_runs r JOIN _svc_jobs j ON j.id = r.job_id
			WHERE r.state = 'pending' ORDER BY r.seq LIMIT 100`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p pending
			if err := rows.Scan(&p.job, &p.key, &p.name, &p.code); err != nil {
				return err
			}
			list = append(list, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	var out []InlineRun
	for _, p := range list {
		c := startCmd{Job: p.job, Key: p.key, By: by, Now: now.UnixMilli(), Until: now.UnixMilli() + q.visibilityMs()}
		v, _, err := q.core.Propose(ctx, cmdStart, c)
		if err != nil {
			return out, err
		}
		if r := v.(*fireResult); r.Fired {
			out = append(out, InlineRun{JobID: p.job, Name: p.name, Key: p.key, Code: p.code, ScheduledAt: r.Run.ScheduledAt, Manual: true, UntilMs: c.Until})
		}
	}
	return out, nil
}

func (q *Queue) applyFire(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[fireCmd](cmd)
	if err != nil {
		return nil, err
	}
	var (
		version, lastScheduled int64
		enabled                bool
		runAt, next            any
	)
	err = tx.QueryRow(`SELECT version, last_scheduled_at, enabled, run_at, next_run_at FROM _svc_jobs WHERE id = ?`, c.Job).
		Scan(&version, &lastScheduled, &enabled, &runAt, &next)
	if errors.Is(err, sql.ErrNoRows) {
		if c.Kind == fireManual {
			return nil, errCronNotFound
		}
		return &fireResult{Reason: "no such job"}, nil
	}
	if err != nil {
		return nil, err
	}
	oneOff := anyInt(runAt) != nil
	switch {
	case version != c.Version && c.Kind == fireManual:
		return nil, errJobMoved
	case version != c.Version:
		return &fireResult{Reason: "the job changed"}, nil
	case c.Kind == fireManual:
		return q.applyManual(tx, c)
	case !enabled:
		return &fireResult{Reason: "the job is disabled"}, nil
	case anyInt(next) == nil || *anyInt(next) != c.From:
		return &fireResult{Reason: "the job's next run moved"}, nil
	case c.Kind == fireSkip:
		if oneOff {
			if err := insertRun(tx, c.Job, scheduledKey(c.ScheduledAt), c.ScheduledAt, false, RunMissed, nil, nil, nil, c.Now); err != nil {
				return nil, err
			}
		}
		_, err := tx.Exec(`UPDATE _svc_jobs SET next_run_at = ?, last_scheduled_at = max(last_scheduled_at, ?),
			enabled = enabled AND NOT ? WHERE id = ?`, nextOrNil(c.Next, oneOff), c.ScheduledAt, oneOff, c.Job)
		return &fireResult{Reason: "missed"}, err
	case c.ScheduledAt <= lastScheduled:
		return &fireResult{Reason: "fired already"}, nil
	}
	key := scheduledKey(c.ScheduledAt)
	var queueJob *string
	state := RunRunning
	var node *string
	until := &c.Until
	if c.QueueJob != nil {
		enq, err := insertJob(tx, c.QueueJob, c.Now)
		if err != nil {
			return nil, err
		}
		queueJob, state, until = &enq.JobID, RunEnqueued, nil
	} else {
		node = &c.By
	}
	if err := insertRun(tx, c.Job, key, c.ScheduledAt, false, state, queueJob, node, until, c.Now); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`UPDATE _svc_jobs SET last_run_at = ?, next_run_at = ?, last_scheduled_at = ?,
		enabled = enabled AND NOT ? WHERE id = ?`, seconds(c.Now), nextOrNil(c.Next, oneOff), c.ScheduledAt, oneOff, c.Job); err != nil {
		return nil, err
	}
	run, err := readRunTx(tx, c.Job, key)
	if err != nil {
		return nil, err
	}
	return &fireResult{Fired: true, Run: run}, nil
}

// applyManual records a run-now: pending for an inline job, enqueued for
// a worker-mode one.
func (q *Queue) applyManual(tx *fsm.Tx, c *fireCmd) (any, error) {
	state := RunPending
	var queueJob *string
	if c.QueueJob != nil {
		enq, err := insertJob(tx, c.QueueJob, c.Now)
		if err != nil {
			return nil, err
		}
		queueJob, state = &enq.JobID, RunEnqueued
	}
	if err := insertRun(tx, c.Job, c.Key, c.ScheduledAt, true, state, queueJob, nil, nil, c.Now); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`UPDATE _svc_jobs SET last_run_at = ? WHERE id = ?`, seconds(c.Now), c.Job); err != nil {
		return nil, err
	}
	run, err := readRunTx(tx, c.Job, c.Key)
	if err != nil {
		return nil, err
	}
	if state == RunPending {
		// The leader's firer starts it.
		tx.Emit(fsm.Event{Kind: evQueued, Subject: "job:" + c.Job})
	}
	return &fireResult{Fired: true, Run: run}, nil
}

// nextOrNil is a firing's next run: none for a one-off.
func nextOrNil(next *int64, oneOff bool) any {
	if oneOff || next == nil {
		return nil
	}
	return *next
}
