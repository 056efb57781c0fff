package queue

import (
	"context"
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

type retryCmd struct {
	Queue string `json:"queue"`
	ID    string `json:"id"`
	Now   int64  `json:"now"` // unix ms
}

// RetryDead puts dead job id of queue back in its queue, due now, with
// its attempts counted from zero again (its retries start over). It
// answers the job as it is then; a job that is not dead is a conflict.
func (q *Queue) RetryDead(ctx context.Context, queue, id string) (*Job, uint64, error) {
	v, idx, err := q.core.Propose(ctx, cmdRetry, retryCmd{Queue: queue, ID: id, Now: q.core.Now().UnixMilli()})
	if err != nil {
		return nil, idx, err
	}
	return v.(*Job), idx, nil
}

func (q *Queue) applyRetry(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[retryCmd](cmd)
	if err != nil {
		return nil, err
	}
	var (
		state     string
		uniqueKey any
	)
	err = tx.QueryRow(`SELECT state, unique_key FROM _svc_queue_jobs WHERE id = ? AND queue = ?`, c.ID, c.Queue).Scan(&state, &uniqueKey)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errJobNotFound
	}
	if err != nil {
		return nil, err
	}
	if state != StateDead {
		return nil, errNotDead
	}
	if k := anyString(uniqueKey); k != nil {
		var other string
		err := tx.QueryRow(`SELECT id FROM _svc_queue_jobs WHERE queue = ? AND unique_key = ? AND state IN ('queued', 'running')`,
			c.Queue, *k).Scan(&other)
		if err == nil {
			return nil, errKeyTaken
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
	}
	j, err := scanJob(tx.QueryRow(`UPDATE _svc_queue_jobs SET state = 'queued', attempt = 0, run_after_ms = ?,
		finished_ms = NULL, updated_ms = ? WHERE id = ? RETURNING `+jobCols, dueNow, c.Now, c.ID).Scan)
	if err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evQueued, Subject: c.Queue})
	return j, nil
}
