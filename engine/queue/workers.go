package queue

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Worker runs the jobs of one queue with its code, at most Concurrency at
// a time (CONTRACT.md's queue worker). Times are unix seconds.
type Worker struct {
	ID          string `json:"id"`
	Queue       string `json:"queue"`
	Code        string `json:"code"`
	Concurrency int64  `json:"concurrency"`
	Enabled     bool   `json:"enabled"`
	Created     int64  `json:"created"`
	Updated     int64  `json:"updated"`
}

// WorkerInput is a worker as an admin sends it: on create, queue and code
// are required; on update, only the members sent change.
type WorkerInput struct {
	Queue       *string `json:"queue"`
	Code        *string `json:"code"`
	Concurrency *int64  `json:"concurrency"`
	Enabled     *bool   `json:"enabled"`
}

// Bounds of a worker.
const (
	DefaultConcurrency = 1
	MaxConcurrency     = 100
	// MaxCodeBytes bounds the code of a worker or a job.
	MaxCodeBytes = 256 << 10
)

// Operations of the worker and job commands.
const (
	opCreate = "create"
	opUpdate = "update"
	opDelete = "delete"
)

type workerCmd struct {
	Op     string `json:"op"`
	Worker Worker `json:"worker"`
}

const workerCols = `id, queue, code, concurrency, enabled, created, updated`

func scanWorker(scan func(dest ...any) error) (*Worker, error) {
	var w Worker
	err := scan(&w.ID, &w.Queue, &w.Code, &w.Concurrency, &w.Enabled, &w.Created, &w.Updated)
	return &w, err
}

// Workers lists every worker, by queue.
func (q *Queue) Workers(ctx context.Context) ([]Worker, error) {
	out := []Worker{}
	err := q.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT ` + workerCols + ` FROM _svc_queue_workers ORDER BY queue`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			w, err := scanWorker(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, *w)
		}
		return rows.Err()
	})
	return out, err
}

// EnabledWorkers lists the enabled workers (none before the module's
// tables exist), for the leader's dispatcher.
func (q *Queue) EnabledWorkers(ctx context.Context) ([]Worker, error) {
	if !q.migrated() {
		return nil, nil
	}
	all, err := q.Workers(ctx)
	out := all[:0]
	for _, w := range all {
		if w.Enabled {
			out = append(out, w)
		}
	}
	return out, err
}

// Worker reads worker id.
func (q *Queue) Worker(ctx context.Context, id string) (*Worker, error) {
	var w *Worker
	err := q.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		w, err = scanWorker(r.QueryRow(`SELECT `+workerCols+` FROM _svc_queue_workers WHERE id = ?`, id).Scan)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errWorkerNotFound
	}
	return w, err
}

// CreateWorker adds a worker for in.Queue (one per queue: a second is a
// conflict). Its code must compile.
func (q *Queue) CreateWorker(ctx context.Context, in WorkerInput) (*Worker, uint64, error) {
	now := q.core.Now().Unix()
	w := Worker{ID: "wrk_" + engine.NewID(), Concurrency: DefaultConcurrency, Enabled: true, Created: now, Updated: now}
	bad := map[string]string{}
	if in.Queue == nil {
		bad["queue"] = "is required"
	}
	if in.Code == nil {
		bad["code"] = "is required"
	}
	q.mergeWorker(&w, in, bad)
	if len(bad) > 0 {
		return nil, 0, engine.ValidationError(bad)
	}
	return q.proposeWorker(ctx, opCreate, w)
}

// UpdateWorker changes the members of worker id that in sends.
func (q *Queue) UpdateWorker(ctx context.Context, id string, in WorkerInput) (*Worker, uint64, error) {
	w, err := q.Worker(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	w.Updated = max(q.core.Now().Unix(), w.Updated)
	bad := map[string]string{}
	q.mergeWorker(w, in, bad)
	if len(bad) > 0 {
		return nil, 0, engine.ValidationError(bad)
	}
	return q.proposeWorker(ctx, opUpdate, *w)
}

// DeleteWorker removes worker id. Its queue's jobs stay; those running
// end as they would have.
func (q *Queue) DeleteWorker(ctx context.Context, id string) (uint64, error) {
	_, idx, err := q.core.Propose(ctx, cmdWorker, workerCmd{Op: opDelete, Worker: Worker{ID: id}})
	return idx, err
}

func (q *Queue) proposeWorker(ctx context.Context, op string, w Worker) (*Worker, uint64, error) {
	v, idx, err := q.core.Propose(ctx, cmdWorker, workerCmd{Op: op, Worker: w})
	if err != nil {
		return nil, idx, err
	}
	return v.(*Worker), idx, nil
}

// mergeWorker applies in to w, noting what is invalid in bad.
func (q *Queue) mergeWorker(w *Worker, in WorkerInput, bad map[string]string) {
	if in.Queue != nil {
		w.Queue = *in.Queue
		switch {
		case !ValidQueueName(w.Queue):
			bad["queue"] = "must be 1 to 64 letters, digits and _ . : - (starting with a letter, digit or _)"
		case q.builtin[w.Queue]:
			bad["queue"] = "is run by svcd itself (a built-in queue): it takes no worker"
		}
	}
	if in.Code != nil {
		w.Code = *in.Code
		if msg := q.checkCode(w.Code); msg != "" {
			bad["code"] = msg
		}
	}
	if in.Concurrency != nil {
		w.Concurrency = *in.Concurrency
		if w.Concurrency < 1 || w.Concurrency > MaxConcurrency {
			bad["concurrency"] = "must be an integer from 1 to 100"
		}
	}
	if in.Enabled != nil {
		w.Enabled = *in.Enabled
	}
}

// checkCode is why code cannot be saved, or "".
func (q *Queue) checkCode(code string) string {
	switch {
	case strings.TrimSpace(code) == "":
		return "is required"
	case len(code) > MaxCodeBytes:
		return "must be at most 256 KiB"
	}
	if q.code != nil {
		if err := q.code.Check(code); err != nil {
			return err.Error()
		}
	}
	return ""
}

func (q *Queue) applyWorker(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[workerCmd](cmd)
	if err != nil {
		return nil, err
	}
	w := c.Worker
	if c.Op == opDelete {
		res, err := tx.Exec(`DELETE FROM _svc_queue_workers WHERE id = ?`, w.ID)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return nil, engine.FirstErr(err, errWorkerNotFound)
		}
		return nil, nil
	}
	var other string
	err = tx.QueryRow(`SELECT id FROM _svc_queue_workers WHERE queue = ? AND id != ?`, w.Queue, w.ID).Scan(&other)
	if err == nil {
		return nil, errWorkerTaken
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	err = nil
	switch c.Op {
	case opCreate:
		_, err = tx.Exec(`INSERT INTO _svc_queue_workers (`+workerCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			w.ID, w.Queue, w.Code, w.Concurrency, w.Enabled, w.Created, w.Updated)
	case opUpdate:
		res, uerr := tx.Exec(`UPDATE _svc_queue_workers SET queue = ?, code = ?, concurrency = ?, enabled = ?, updated = ? WHERE id = ?`,
			w.Queue, w.Code, w.Concurrency, w.Enabled, w.Updated, w.ID)
		if uerr != nil {
			return nil, uerr
		}
		if n, rerr := res.RowsAffected(); rerr != nil || n == 0 {
			return nil, engine.FirstErr(rerr, errWorkerNotFound)
		}
	default:
		return nil, errors.New("queue.worker: unknown operation " + c.Op)
	}
	if err != nil {
		return nil, err
	}
	// The queue may have work the worker can take now.
	tx.Emit(fsm.Event{Kind: evQueued, Subject: w.Queue})
	return &w, nil
}
