package queue

import (
	"context"
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// reapBatch bounds the rows one reap command changes or drops.
const reapBatch = 1000

// Messages the reaper leaves.
const (
	msgClaimExpired = "the run's claim ended without a completion (queues.visibility_timeout_sec): the node running it stopped leading or died"
	msgRunLost      = "the run's leader stopped before the run ended; an inline run is not run again (at most once)"
)

type reapCmd struct {
	Now int64 `json:"now"` // unix ms
	// DropBefore: succeeded jobs that finished before it (unix ms) are
	// dropped; 0 drops none.
	DropBefore int64 `json:"drop_before"`
}

// Reap releases the claims past their end (the job is queued again while
// retries remain, else dead), marks lost the runs of scheduled jobs whose
// claim ended, and drops succeeded jobs older than
// queues.succeeded_retention_sec. It proposes nothing when this replica
// sees nothing to do, and answers whether it proposed.
func (q *Queue) Reap(ctx context.Context) (bool, error) {
	if !q.migrated() {
		return false, nil
	}
	now := q.core.Now().UnixMilli()
	c := reapCmd{Now: now}
	if r := q.retentionMs(); r > 0 {
		c.DropBefore = now - r
	}
	work, err := q.reapable(ctx, c)
	if err != nil || !work {
		return false, err
	}
	_, _, err = q.core.Propose(ctx, cmdReap, c)
	return err == nil, err
}

// reapable reports whether this replica holds anything c would change.
func (q *Queue) reapable(ctx context.Context, c reapCmd) (bool, error) {
	var one int
	err := q.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT 1 WHERE EXISTS (SELECT 1 FROM _svc_queue_jobs WHERE state = 'running' AND claim_until_ms <= ?)
			OR EXISTS (SELECT 1 FROM _svc_job_runs WHERE state = 'running' AND claim_until_ms <= ?)
			OR EXISTS (SELECT 1 FROM _svc_queue_jobs WHERE state = 'succeeded' AND finished_ms < ?)`,
			c.Now, c.Now, c.DropBefore).Scan(&one)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (q *Queue) applyReap(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[reapCmd](cmd)
	if err != nil {
		return nil, err
	}
	type expired struct {
		id, queue        string
		attempt, retries int64
	}
	rows, err := tx.Query(`SELECT id, queue, attempt, retries FROM _svc_queue_jobs WHERE state = 'running' AND claim_until_ms <= ?
		ORDER BY claim_until_ms, id LIMIT ?`, c.Now, reapBatch)
	if err != nil {
		return nil, err
	}
	var list []expired
	for rows.Next() {
		var e expired
		if err := rows.Scan(&e.id, &e.queue, &e.attempt, &e.retries); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, e)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for _, e := range list {
		if e.attempt <= e.retries {
			_, err = tx.Exec(`UPDATE _svc_queue_jobs SET state = 'queued', last_error = ?, run_after_ms = ?,
				claimed_by = NULL, claim_until_ms = NULL, updated_ms = ? WHERE id = ?`, msgClaimExpired, dueNow, c.Now, e.id)
			tx.Emit(fsm.Event{Kind: evQueued, Subject: e.queue})
		} else {
			_, err = tx.Exec(`UPDATE _svc_queue_jobs SET state = 'dead', last_error = ?,
				claimed_by = NULL, claim_until_ms = NULL, updated_ms = ?, finished_ms = ? WHERE id = ?`, msgClaimExpired, c.Now, c.Now, e.id)
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(`UPDATE _svc_job_runs SET state = 'lost', error = ?, finished_ms = ?
		WHERE state = 'running' AND claim_until_ms <= ?`, msgRunLost, c.Now, c.Now); err != nil {
		return nil, err
	}
	if c.DropBefore > 0 {
		if _, err := tx.Exec(`DELETE FROM _svc_queue_jobs WHERE id IN (SELECT id FROM _svc_queue_jobs
			WHERE state = 'succeeded' AND finished_ms < ? ORDER BY finished_ms, id LIMIT ?)`, c.DropBefore, reapBatch); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
