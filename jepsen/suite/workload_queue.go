package suite

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"svcd/jepsen/checker"
	"svcd/jepsen/harness"
)

// Queue enqueues jobs through random nodes while the faults run; a worker
// on the leader runs them (each run writes a record of its own, the job's
// key, id and attempt, and returns the key, the attempt and that record's
// id), and two scheduled jobs fire every second: one in worker mode (each
// firing enqueues a job on the "ticks" queue, run by a second worker), one
// inline (each run writes a record naming its scheduled time). At the end
// (checker.CheckQueue) every acknowledged job must have run to success,
// with the record of its succeeding run, or been dead-lettered; jobs with
// more than one run record are counted, and must have failed in between,
// one run per claim; no run record may name a key nobody enqueued; and no
// scheduled time may have fired twice.
type Queue struct {
	mu        sync.Mutex
	seq       map[int]int
	attempted map[string]bool
	acked     []checker.Enqueue
	cronIDs   []string
	quiesced  bool
}

// NewQueue is the queue workload.
func NewQueue() *Queue { return &Queue{seq: map[int]int{}, attempted: map[string]bool{}} }

func (q *Queue) Name() string { return "queue" }

// Queue settings for the run: claims short enough for the reaper to
// release the ones a fault stranded within the run, a budget below them,
// and six-field schedules.
var queueSettings = map[string]any{
	"queues.visibility_timeout_sec": "5",
	"execution.timeout_ms":          "3000",
	"jobs.cron_seconds":             "1",
}

const (
	workQueue = "work"
	tickQueue = "ticks"
)

// The collections the code writes to: one record per run of the work
// queue's worker, one per run of the inline scheduled job. Their rules
// are null (admin only): code acts as the system, and the check reads as
// an admin.
const (
	runsCollection = `{"name":"runs","type":"base","fields":[{"name":"key","type":"text","required":true},
		{"name":"job","type":"text","required":true},{"name":"attempt","type":"number","integer":true}]}`
	firingsCollection = `{"name":"firings","type":"base","fields":[{"name":"job","type":"text","required":true},
		{"name":"scheduledAt","type":"number","integer":true}]}`
)

// The code of the work queue's worker and of the inline scheduled job.
const (
	workCode = `const run = await helpers.records.create("runs", {key: payload.key, job: jobId, attempt})
return {key: payload.key, attempt, run: run.id}`
	inlineCode = `const f = await helpers.records.create("firings", {job: jobId, scheduledAt})
return {scheduledAt, record: f.id}`
)

func (q *Queue) Setup(ctx context.Context, env *Env) error {
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	admin := env.C.Admin(l)
	for _, def := range []string{runsCollection, firingsCollection} {
		if err := createCollection(ctx, env, def); err != nil {
			return err
		}
	}
	steps := []struct {
		method, path string
		body         any
		want         int
	}{
		{"PATCH", "/api/v1/admin/settings", queueSettings, http.StatusOK},
		{"POST", "/api/v1/admin/workers", map[string]any{"queue": workQueue, "concurrency": 8,
			"code": workCode}, http.StatusCreated},
		{"POST", "/api/v1/admin/workers", map[string]any{"queue": tickQueue, "concurrency": 4,
			"code": `return payload.scheduledAt`}, http.StatusCreated},
		{"POST", "/api/v1/admin/jobs", map[string]any{"name": "ticker", "cron": "* * * * * *", "mode": "worker:" + tickQueue}, http.StatusCreated},
		{"POST", "/api/v1/admin/jobs", map[string]any{"name": "inline", "cron": "* * * * * *", "code": inlineCode}, http.StatusCreated},
	}
	var last uint64
	for _, s := range steps {
		resp, err := admin.Do(ctx, s.method, s.path, s.body)
		if err != nil {
			return err
		}
		if resp.Status != s.want {
			return fmt.Errorf("%s %s: %s", s.method, s.path, resp)
		}
		if s.path == "/api/v1/admin/jobs" {
			var out struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			if err := resp.JSON(&out); err != nil {
				return err
			}
			q.cronIDs = append(q.cronIDs, out.Data.ID)
		}
		last = resp.Index()
	}
	return waitAll(ctx, env, last)
}

func (q *Queue) Step(ctx context.Context, w *Worker) {
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	q.mu.Lock()
	q.seq[w.ID]++
	key := fmt.Sprintf("c%d-%d", w.ID, q.seq[w.ID])
	q.attempted[key] = true
	q.mu.Unlock()
	cl := w.env.C.Admin(nd)
	cl.Timeout = OpTimeout
	resp, err := cl.Do(context.Background(), "POST", "/api/v1/admin/queues/"+workQueue+"/jobs",
		map[string]any{"payload": map[string]any{"key": key}, "uniqueKey": key, "retries": 5, "retryDelayMs": 200})
	switch {
	case transient(status(resp), err):
		w.Done("enqueue", Info)
	case resp.Status == http.StatusCreated:
		var out struct {
			Data struct {
				JobID   string `json:"jobId"`
				Deduped bool   `json:"deduped"`
			} `json:"data"`
		}
		if err := resp.JSON(&out); err != nil || out.Data.JobID == "" || out.Data.Deduped {
			w.Errorf("%s enqueue %s: %s", nd.Name, key, resp)
			return
		}
		q.mu.Lock()
		q.acked = append(q.acked, checker.Enqueue{Key: key, JobID: out.Data.JobID})
		q.mu.Unlock()
		w.Done("enqueue", OK)
	default:
		w.Errorf("%s enqueue %s: %s", nd.Name, key, resp)
		time.Sleep(100 * time.Millisecond)
	}
}

// Quiesce disables the scheduled jobs once the clients stopped, so the
// log can come to rest (the runner waits for that before checking).
func (q *Queue) Quiesce(ctx context.Context, env *Env) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range q.cronIDs {
		if err := retryAdmin(ctx, env, "PATCH", "/api/v1/admin/jobs/"+id, map[string]any{"enabled": false}, http.StatusOK); err != nil {
			return err
		}
	}
	q.quiesced = true
	return nil
}

// retryAdmin sends an admin write through the leader until it answers
// want (faults are healed by now; an election may still be under way).
func retryAdmin(ctx context.Context, env *Env, method, path string, body any, want int) error {
	for {
		var last string
		if l, err := env.C.WaitLeader(10 * time.Second); err == nil {
			resp, err := env.C.Admin(l).Do(ctx, method, path, body)
			switch {
			case err == nil && resp.Status == want:
				return nil
			case err == nil:
				last = resp.String()
			default:
				last = err.Error()
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %v (last answer %s)", method, path, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// drained waits until the leader counts no queued or running job.
func drained(ctx context.Context, env *Env) error {
	for {
		l, err := env.C.WaitLeader(10 * time.Second)
		var open int64
		if err == nil {
			var out struct {
				Data []struct {
					Queue  string           `json:"queue"`
					Counts map[string]int64 `json:"counts"`
				} `json:"data"`
			}
			var resp *harness.Response
			resp, err = env.C.Admin(l).Strong().Do(ctx, "GET", "/api/v1/admin/queues", nil)
			if err == nil && resp.Status == http.StatusOK && resp.JSON(&out) == nil {
				open = 0
				for _, q := range out.Data {
					open += q.Counts["queued"] + q.Counts["running"]
				}
				if open == 0 {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("jobs still open when the check began (%d queued or running): %v", open, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
