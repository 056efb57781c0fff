package queue

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sort"

	"svcd/engine"
	"svcd/fsm"
)

// QueueStats is one queue of the admin overview: its jobs counted by
// state, and its worker's id (null without one).
type QueueStats struct {
	Queue  string           `json:"queue"`
	Counts map[string]int64 `json:"counts"`
	Worker *string          `json:"worker"`
	// Builtin marks a queue whose jobs svcd runs itself (builtin.go).
	Builtin bool `json:"builtin,omitempty"`
}

// Queues lists every queue that has jobs or a worker, by name, with its
// jobs counted by state.
func (q *Queue) Queues(ctx context.Context) ([]QueueStats, error) {
	byName := map[string]*QueueStats{}
	get := func(name string) *QueueStats {
		s := byName[name]
		if s == nil {
			s = &QueueStats{Queue: name, Counts: map[string]int64{}, Builtin: q.builtin[name]}
			for _, st := range States {
				s.Counts[st] = 0
			}
			byName[name] = s
		}
		return s
	}
	err := q.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT queue, state, COUNT(*) FROM _svc_queue_jobs GROUP BY queue, state`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var name, state string
			var n int64
			if err := rows.Scan(&name, &state, &n); err != nil {
				rows.Close()
				return err
			}
			get(name).Counts[state] = n
		}
		if err := rows.Close(); err != nil {
			return err
		}
		rows, err = r.Query(`SELECT queue, id FROM _svc_queue_workers`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, id string
			if err := rows.Scan(&name, &id); err != nil {
				return err
			}
			get(name).Worker = &id
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	out := make([]QueueStats, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out, nil
}

// MaxPerPage bounds a page of jobs or runs.
const MaxPerPage = 500

// JobQuery selects a page of a queue's jobs: State "" is every state;
// Page from 1; PerPage 1 to MaxPerPage (0: engine.DefaultPerPage).
type JobQuery struct {
	State   string
	Page    int
	PerPage int
}

// JobPage is one page of jobs, newest first: SPEC.md's list shape.
type JobPage struct {
	Data       []Job `json:"data"`
	Page       int   `json:"page"`
	PerPage    int   `json:"perPage"`
	TotalItems int   `json:"totalItems"`
	TotalPages int   `json:"totalPages"`
}

// errBadState is a list filter naming no state.
var errBadState = engine.Errorf(engine.KindBadRequest, "state must be one of queued, running, succeeded, dead")

// Jobs lists a page of queue's jobs, newest first.
func (q *Queue) Jobs(ctx context.Context, queue string, jq JobQuery) (*JobPage, error) {
	if jq.State != "" && !slices.Contains(States, jq.State) {
		return nil, errBadState
	}
	page, perPage := pageBounds(jq.Page, jq.PerPage)
	out := &JobPage{Data: []Job{}, Page: page, PerPage: perPage}
	where, args := `queue = ?`, []any{queue}
	if jq.State != "" {
		where, args = where+` AND state = ?`, append(args, jq.State)
	}
	err := q.core.Store().ViewTx(ctx, func(r *fsm.Reader) error {
		if err := r.QueryRow(`SELECT COUNT(*) FROM _svc_queue_jobs WHERE `+where, args...).Scan(&out.TotalItems); err != nil {
			return err
		}
		rows, err := r.Query(`SELECT `+jobCols+` FROM _svc_queue_jobs WHERE `+where+` ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?`,
			append(args, perPage, (page-1)*perPage)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanJob(rows.Scan)
			if err != nil {
				return err
			}
			out.Data = append(out.Data, *j)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	out.TotalPages = (out.TotalItems + perPage - 1) / perPage
	return out, nil
}

// pageBounds resolves a page request.
func pageBounds(page, perPage int) (int, int) {
	if perPage < 1 {
		perPage = engine.DefaultPerPage
	}
	return max(page, 1), min(perPage, MaxPerPage)
}

// GetJob reads job id of queue.
func (q *Queue) GetJob(ctx context.Context, queue, id string) (*Job, error) {
	var j *Job
	err := q.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		j, err = scanJob(r.QueryRow(`SELECT `+jobCols+` FROM _svc_queue_jobs WHERE id = ? AND queue = ?`, id, queue).Scan)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errJobNotFound
	}
	return j, err
}
