package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// ClaimedJob is a job a claim moved to running: what its worker's code
// receives.
type ClaimedJob struct {
	ID      string          `json:"id"`
	Queue   string          `json:"queue"`
	Attempt int64           `json:"attempt"`
	Payload json.RawMessage `json:"payload"`
	// Until is the claim's end (unix ms): the run must be over by then.
	Until int64 `json:"until"`
}

type claimResult struct {
	Jobs []ClaimedJob `json:"jobs"`
}

// claimCmd claims due jobs for worker Worker, at most Max (the free slots
// of the leader's dispatcher) and at most the worker's concurrency less
// its queue's running jobs, as the database counts them.
//
// A claim for a built-in queue (builtin.go) names no worker: it carries
// the queue and its concurrency instead.
type claimCmd struct {
	Worker      string `json:"worker"`
	Queue       string `json:"queue,omitempty"`
	Concurrency int64  `json:"concurrency,omitempty"`
	Max         int64  `json:"max"`
	By          string `json:"by"`
	Now         int64  `json:"now"`   // unix ms
	Until       int64  `json:"until"` // unix ms: the claims' end
}

// Claim claims up to max due jobs of worker's queue for node by (the
// leader's dispatcher calls it). It proposes nothing when this replica
// sees no due job.
func (q *Queue) Claim(ctx context.Context, workerID, queue string, max int, by string) ([]ClaimedJob, error) {
	if max <= 0 || !q.migrated() {
		return nil, nil
	}
	now := q.core.Now().UnixMilli()
	due, err := q.hasDue(ctx, queue, now)
	if err != nil || !due {
		return nil, err
	}
	v, _, err := q.core.Propose(ctx, cmdClaim, claimCmd{Worker: workerID, Max: int64(max), By: by, Now: now, Until: now + q.visibilityMs()})
	if err != nil {
		return nil, err
	}
	return v.(*claimResult).Jobs, nil
}

// hasDue reports whether this replica holds a queued job of queue due at
// now.
func (q *Queue) hasDue(ctx context.Context, queue string, now int64) (bool, error) {
	var one int
	err := q.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT 1 FROM _svc_queue_jobs WHERE queue = ? AND state = 'queued' AND run_after_ms <= ? LIMIT 1`,
			queue, now).Scan(&one)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (q *Queue) applyClaim(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[claimCmd](cmd)
	if err != nil {
		return nil, err
	}
	out := &claimResult{Jobs: []ClaimedJob{}}
	var (
		queue       string
		concurrency int64
		enabled     bool
	)
	if c.Worker == "" {
		queue, concurrency = c.Queue, c.Concurrency
	} else {
		err = tx.QueryRow(`SELECT queue, concurrency, enabled FROM _svc_queue_workers WHERE id = ?`, c.Worker).Scan(&queue, &concurrency, &enabled)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !enabled) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
	var running int64
	if err := tx.QueryRow(`SELECT COUNT(*) FROM _svc_queue_jobs WHERE queue = ? AND state = 'running'`, queue).Scan(&running); err != nil {
		return nil, err
	}
	free := min(concurrency-running, c.Max)
	if free <= 0 {
		return out, nil
	}
	rows, err := tx.Query(`SELECT id FROM _svc_queue_jobs WHERE queue = ? AND state = 'queued' AND run_after_ms <= ?
		ORDER BY run_after_ms, created_ms, id LIMIT ?`, queue, c.Now, free)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		j := ClaimedJob{ID: id, Queue: queue, Until: c.Until}
		var payload string
		if err := tx.QueryRow(`UPDATE _svc_queue_jobs SET state = 'running', attempt = attempt + 1, claimed_by = ?,
			claim_until_ms = ?, updated_ms = ? WHERE id = ? RETURNING attempt, payload`,
			c.By, c.Until, c.Now, id).Scan(&j.Attempt, &payload); err != nil {
			return nil, err
		}
		j.Payload = json.RawMessage(payload)
		out.Jobs = append(out.Jobs, j)
	}
	return out, nil
}
