package checker

import (
	"fmt"
	"sort"
)

// The queue workload's history (docs/jobs.md): jobs enqueued through
// random nodes under faults, the final state of every job, and the
// firings of scheduled jobs. Delivery is at least once: every
// acknowledged job must end succeeded (or dead-lettered), a job may run
// more than once only when a run's claim expired (a failure: its attempt
// is then above 1), and a scheduled time fires at most once per job.

// Enqueue is an acknowledged enqueue: the client's key and the job id the
// service answered.
type Enqueue struct {
	Key   string
	JobID string
}

// JobState is a job as the service holds it at the end. Result is the key
// the worker's run echoed (empty when it did not succeed).
type JobState struct {
	JobID   string
	Key     string
	State   string
	Attempt int
	Result  string
}

// Firing is one firing of a scheduled job for one scheduled time, as
// observed (a worker-mode firing's queue job, or an inline run).
type Firing struct {
	Job         string
	ScheduledAt int64
	// Source names what showed it (a queue job id, a run key).
	Source string
}

// QueueHistory is what the checker judges.
type QueueHistory struct {
	Acked []Enqueue
	// Attempted holds every key a client tried to enqueue, acknowledged or
	// not (a timed-out enqueue may have been applied).
	Attempted map[string]bool
	// Jobs are every job of the queue at the end, on one node.
	Jobs    []JobState
	Firings []Firing
}

// QueueResult is the checker's verdict.
type QueueResult struct {
	Acknowledged int
	// Lost: acknowledged jobs the service does not hold.
	Lost int
	// Unfinished: acknowledged jobs still queued or running at the end.
	Unfinished int
	// Dead: jobs dead-lettered (allowed: their retries ran out).
	Dead int
	// WrongResult: succeeded jobs whose result is not their own key.
	WrongResult int
	// Unexpected: jobs whose key no client tried.
	Unexpected int
	// Duplicates: jobs run more than once (attempt above 1: each run
	// after the first followed the expiry of a claim, a failure).
	Duplicates int
	// DoubledFirings: (job, scheduled time) pairs fired more than once.
	DoubledFirings int
	Firings        int
	Notes          []string
}

// Valid reports whether the history keeps the queue's promises.
func (r QueueResult) Valid() bool {
	return r.Lost == 0 && r.Unfinished == 0 && r.WrongResult == 0 && r.Unexpected == 0 && r.DoubledFirings == 0
}

// maxNotes bounds the examples a result names.
const maxNotes = 10

func (r *QueueResult) note(format string, args ...any) {
	if len(r.Notes) < maxNotes {
		r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
	}
}

// CheckQueue judges h.
func CheckQueue(h QueueHistory) QueueResult {
	r := QueueResult{Acknowledged: len(h.Acked), Firings: len(h.Firings)}
	byID := make(map[string]JobState, len(h.Jobs))
	for _, j := range h.Jobs {
		byID[j.JobID] = j
		if !h.Attempted[j.Key] {
			r.Unexpected++
			r.note("job %s has key %q, which no client enqueued", j.JobID, j.Key)
		}
		switch j.State {
		case "dead":
			r.Dead++
		case "succeeded":
			if j.Result != j.Key {
				r.WrongResult++
				r.note("job %s (key %q) succeeded with result %q", j.JobID, j.Key, j.Result)
			}
		}
		if j.Attempt > 1 && (j.State == "succeeded" || j.State == "dead") {
			r.Duplicates++
		}
	}
	for _, a := range h.Acked {
		j, ok := byID[a.JobID]
		switch {
		case !ok:
			r.Lost++
			r.note("acknowledged job %s (key %q) is gone", a.JobID, a.Key)
		case j.Key != a.Key:
			r.Lost++
			r.note("acknowledged job %s has key %q, not %q", a.JobID, j.Key, a.Key)
		case j.State != "succeeded" && j.State != "dead":
			r.Unfinished++
			r.note("acknowledged job %s (key %q) is still %s", a.JobID, a.Key, j.State)
		}
	}
	type slot struct {
		job string
		at  int64
	}
	seen := map[slot][]string{}
	for _, f := range h.Firings {
		k := slot{f.Job, f.ScheduledAt}
		seen[k] = append(seen[k], f.Source)
	}
	var doubled []slot
	for k, srcs := range seen {
		if len(srcs) > 1 {
			doubled = append(doubled, k)
		}
	}
	sort.Slice(doubled, func(i, j int) bool { return doubled[i].at < doubled[j].at })
	for _, k := range doubled {
		r.DoubledFirings++
		r.note("job %s fired %d times for scheduled time %d (%v)", k.job, len(seen[k]), k.at, seen[k])
	}
	return r
}
