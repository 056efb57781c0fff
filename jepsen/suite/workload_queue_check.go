package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"svcd/jepsen/checker"
	"svcd/jepsen/harness"
)

func (q *Queue) Check(ctx context.Context, env *Env) Verdict {
	q.mu.Lock()
	quiesced := q.quiesced
	q.mu.Unlock()
	v := Verdict{Valid: true, Acknowledged: len(q.acked)}
	if !quiesced {
		if err := q.Quiesce(ctx, env); err != nil {
			v.Valid = false
			v.Notes = append(v.Notes, "quiesce: "+err.Error())
		}
	}
	// Jobs a fault stranded are released by the reaper after the
	// visibility timeout, then run: give them time to finish.
	dctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	err := drained(dctx, env)
	cancel()
	if err != nil {
		v.Valid = false
		v.Notes = append(v.Notes, err.Error())
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, nd := range env.C.Running() {
		h, err := q.history(ctx, env, nd)
		if err != nil {
			v.Valid = false
			v.Notes = append(v.Notes, fmt.Sprintf("%s: final read: %v", nd.Name, err))
			continue
		}
		r := checker.CheckQueue(h)
		v.Lost = max(v.Lost, r.Lost+r.Unfinished)
		v.Duplicates = max(v.Duplicates, r.Duplicates)
		if !r.Valid() {
			v.Valid = false
		}
		v.Notes = append(v.Notes, fmt.Sprintf("%s holds %d jobs: %d acknowledged lost, %d unfinished, %d dead, %d run more than once (after a failure), %d wrong results, %d unexpected; %d firings, %d doubled",
			nd.Name, len(h.Jobs), r.Lost, r.Unfinished, r.Dead, r.Duplicates, r.WrongResult, r.Unexpected, r.Firings, r.DoubledFirings))
		for _, n := range r.Notes {
			v.Notes = append(v.Notes, nd.Name+": "+n)
		}
	}
	return v
}

// queuedJob is a queue job as the final read sees it.
type queuedJob struct {
	ID      string          `json:"id"`
	State   string          `json:"state"`
	Attempt int             `json:"attempt"`
	Payload json.RawMessage `json:"payload"`
	Result  json.RawMessage `json:"result"`
}

// history reads node nd's final state (strong reads: the node has applied
// everything the leader committed).
func (q *Queue) history(ctx context.Context, env *Env, nd *harness.Node) (checker.QueueHistory, error) {
	cl := env.C.Admin(nd).Strong()
	cl.Timeout = 30 * time.Second
	h := checker.QueueHistory{Acked: q.acked, Attempted: q.attempted}
	work, err := listQueue(ctx, cl, workQueue)
	if err != nil {
		return h, err
	}
	for _, j := range work {
		var p struct{ Key string }
		var res struct{ Key string }
		json.Unmarshal(j.Payload, &p)
		if len(j.Result) > 0 {
			json.Unmarshal(j.Result, &res)
		}
		h.Jobs = append(h.Jobs, checker.JobState{JobID: j.ID, Key: p.Key, State: j.State, Attempt: j.Attempt, Result: res.Key})
	}
	ticks, err := listQueue(ctx, cl, tickQueue)
	if err != nil {
		return h, err
	}
	for _, j := range ticks {
		var p struct {
			JobID       string `json:"jobId"`
			ScheduledAt int64  `json:"scheduledAt"`
			Manual      bool   `json:"manual"`
		}
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return h, fmt.Errorf("tick %s: %w", j.ID, err)
		}
		if !p.Manual {
			h.Firings = append(h.Firings, checker.Firing{Job: p.JobID, ScheduledAt: p.ScheduledAt, Source: "queue job " + j.ID})
		}
	}
	// The inline job keeps its last hundred runs.
	for _, id := range q.cronIDs[1:] {
		resp, err := cl.Do(ctx, "GET", "/api/v1/admin/jobs/"+id+"/runs?perPage=500", nil)
		if err != nil {
			return h, err
		}
		if resp.Status != http.StatusOK {
			return h, fmt.Errorf("runs: %s", resp)
		}
		var out struct {
			Data struct {
				Data []struct {
					Key         string `json:"key"`
					ScheduledAt int64  `json:"scheduled_at"`
					Manual      bool   `json:"manual"`
				} `json:"data"`
			} `json:"data"`
		}
		if err := resp.JSON(&out); err != nil {
			return h, err
		}
		for _, r := range out.Data.Data {
			if !r.Manual {
				h.Firings = append(h.Firings, checker.Firing{Job: id, ScheduledAt: r.ScheduledAt, Source: "run " + r.Key})
			}
		}
	}
	return h, nil
}

// listQueue reads every job of queue, page by page.
func listQueue(ctx context.Context, cl *harness.Client, queue string) ([]queuedJob, error) {
	var all []queuedJob
	for page := 1; ; page++ {
		resp, err := cl.Do(ctx, "GET", "/api/v1/admin/queues/"+queue+"/jobs?perPage=500&page="+strconv.Itoa(page), nil)
		if err != nil {
			return nil, err
		}
		if resp.Status != http.StatusOK {
			return nil, fmt.Errorf("list %s: %s", queue, resp)
		}
		var out struct {
			Data struct {
				Data       []queuedJob `json:"data"`
				TotalPages int         `json:"totalPages"`
			} `json:"data"`
		}
		if err := resp.JSON(&out); err != nil {
			return nil, err
		}
		all = append(all, out.Data.Data...)
		if page >= out.Data.TotalPages {
			return all, nil
		}
	}
}
