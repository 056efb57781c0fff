package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"svcd/jepsen/checker"
	"svcd/jepsen/harness"
)

// queuedJob is a queue job as the final read sees it.
type queuedJob struct {
	ID        string          `json:"id"`
	State     string          `json:"state"`
	Attempt   int             `json:"attempt"`
	LastError *string         `json:"lastError"`
	Payload   json.RawMessage `json:"payload"`
	Result    json.RawMessage `json:"result"`
}

// history reads node nd's final state (strong reads: the node has applied
// everything the leader committed): the jobs of both queues, the run
// records of the work queue's worker and the firing records of the inline
// job.
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
		json.Unmarshal(j.Payload, &p)
		js := checker.JobState{JobID: j.ID, Key: p.Key, State: j.State, Attempt: j.Attempt}
		if j.LastError != nil {
			js.LastError = *j.LastError
		}
		if len(j.Result) > 0 {
			var res struct {
				Key     string
				Attempt int
				Run     string
			}
			json.Unmarshal(j.Result, &res)
			js.Result = checker.JobResult{Key: res.Key, Attempt: res.Attempt, Run: res.Run}
		}
		h.Jobs = append(h.Jobs, js)
	}
	err = listRecords(ctx, cl, "runs", func(raw json.RawMessage) error {
		var r struct {
			ID, Key, Job string
			Attempt      float64
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		h.Runs = append(h.Runs, checker.Run{ID: r.ID, Key: r.Key, JobID: r.Job, Attempt: int(r.Attempt)})
		return nil
	})
	if err != nil {
		return h, err
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
	// The inline job is never run by hand: every record is a firing.
	err = listRecords(ctx, cl, "firings", func(raw json.RawMessage) error {
		var f struct {
			ID, Job     string
			ScheduledAt float64
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return err
		}
		h.Firings = append(h.Firings, checker.Firing{Job: f.Job, ScheduledAt: int64(f.ScheduledAt), Source: "record " + f.ID})
		return nil
	})
	return h, err
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

// listRecords hands every record of coll to fn, in cursor pages of 500.
func listRecords(ctx context.Context, cl *harness.Client, coll string, fn func(json.RawMessage) error) error {
	cursor := ""
	for {
		resp, err := cl.Do(ctx, "GET", "/api/v1/"+coll+"?perPage=500&cursor="+url.QueryEscape(cursor), nil)
		if err != nil {
			return err
		}
		if resp.Status != http.StatusOK {
			return fmt.Errorf("list %s: %s", coll, resp)
		}
		var page struct {
			Data       []json.RawMessage
			NextCursor *string
		}
		if err := resp.JSON(&page); err != nil {
			return err
		}
		for _, raw := range page.Data {
			if err := fn(raw); err != nil {
				return fmt.Errorf("%s: %w", coll, err)
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return nil
		}
		cursor = *page.NextCursor
	}
}
