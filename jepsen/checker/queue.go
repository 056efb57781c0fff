package checker

import (
	"fmt"
	"sort"
)

// The queue workload's history (docs/jobs.md): jobs enqueued through
// random nodes under faults, the final state of every job, the record
// each run of the worker wrote, and the firings of scheduled jobs.
// Delivery is at least once: every acknowledged job must end succeeded
// (or dead-lettered), and its succeeding run left its record; a job may
// run more than once only across a failure (a claim that expired, a run
// that threw), each run on a claim of its own; a scheduled time fires at
// most once per job.

// Enqueue is an acknowledged enqueue: the client's key and the job id the
// service answered.
type Enqueue struct {
	Key   string
	JobID string
}

// JobState is a job as the service holds it at the end.
type JobState struct {
	JobID string
	Key   string
	State string
	// Attempt counts the claims of the job (each run has its own).
	Attempt int
	// LastError is the job's last failure, empty when it never failed; it
	// outlives a later success.
	LastError string
	// Result is what the succeeding run returned (zero when the job did
	// not succeed).
	Result JobResult
}

// JobResult is a succeeded run's result: the key of its payload, its
// attempt and the id of the run record it wrote.
type JobResult struct {
	Key     string
	Attempt int
	Run     string
}

// Run is a run record: the worker's code writes one per run (a record
// create through the log) before it returns.
type Run struct {
	ID      string
	Key     string
	JobID   string
	Attempt int
}

// Firing is one firing of a scheduled job for one scheduled time, as
// observed (a worker-mode firing's queue job, or the record an inline
// run wrote).
type Firing struct {
	Job         string
	ScheduledAt int64
	// Source names what showed it (a queue job id, a record id).
	Source string
}

// QueueHistory is what the checker judges.
type QueueHistory struct {
	Acked []Enqueue
	// Attempted holds every key a client tried to enqueue, acknowledged or
	// not (a timed-out enqueue may have been applied).
	Attempted map[string]bool
	// Jobs are every job of the queue at the end, on one node; Runs every
	// run record on that node.
	Jobs    []JobState
	Runs    []Run
	Firings []Firing
}

// QueueResult is the checker's verdict. Every count but Dead,
// DeadUnrun and Duplicates is a violation.
type QueueResult struct {
	Acknowledged int
	// Lost: acknowledged jobs the service does not hold.
	Lost int
	// Unfinished: acknowledged jobs still queued or running at the end.
	Unfinished int
	// Dead: jobs dead-lettered (allowed: their retries ran out). DeadUnrun
	// of the acknowledged ones left no run record (allowed: every run
	// failed before its record committed).
	Dead      int
	DeadUnrun int
	// WrongResult: succeeded jobs whose result is not their own key and
	// attempt.
	WrongResult int
	// Unexpected: jobs whose key no client tried.
	Unexpected int
	// Runs counts the run records; Unrun: succeeded jobs without the
	// record of their succeeding run (its effect is gone).
	Runs  int
	Unrun int
	// Duplicates: jobs with more than one run record (allowed across a
	// failure). Unexplained: of those, jobs that never failed.
	Duplicates  int
	Unexplained int
	// ClaimReruns: run records beyond the first for one claim (job and
	// attempt); OutsideClaims: run records whose attempt no claim of the
	// job had.
	ClaimReruns   int
	OutsideClaims int
	// InventedRuns: run records whose key no client tried; StrayRuns: run
	// records naming a job the queue does not hold, or one with another
	// key.
	InventedRuns int
	StrayRuns    int
	// DoubledFirings: (job, scheduled time) pairs fired more than once.
	DoubledFirings int
	Firings        int
	Notes          []string
}

// Valid reports whether the history keeps the queue's promises.
func (r QueueResult) Valid() bool {
	return r.Lost == 0 && r.Unfinished == 0 && r.WrongResult == 0 && r.Unexpected == 0 &&
		r.Unrun == 0 && r.Unexplained == 0 && r.ClaimReruns == 0 && r.OutsideClaims == 0 &&
		r.InventedRuns == 0 && r.StrayRuns == 0 && r.DoubledFirings == 0
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
	r := QueueResult{Acknowledged: len(h.Acked), Firings: len(h.Firings), Runs: len(h.Runs)}
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
			if j.Result.Key != j.Key || j.Result.Attempt != j.Attempt {
				r.WrongResult++
				r.note("job %s (key %q, attempt %d) succeeded with result %+v", j.JobID, j.Key, j.Attempt, j.Result)
			}
		}
	}
	runs := r.checkRuns(h, byID)
	for _, a := range h.Acked {
		j, ok := byID[a.JobID]
		switch {
		case !ok:
			r.Lost++
			r.note("acknowledged job %s (key %q) is gone", a.JobID, a.Key)
		case j.Key != a.Key:
			r.Lost++
			r.note("acknowledged job %s has key %q, not %q", a.JobID, j.Key, a.Key)
		case j.State == "dead" && len(runs[a.JobID]) == 0:
			r.DeadUnrun++
		case j.State != "succeeded" && j.State != "dead":
			r.Unfinished++
			r.note("acknowledged job %s (key %q) is still %s", a.JobID, a.Key, j.State)
		}
	}
	r.checkFirings(h.Firings)
	return r
}

// checkFirings counts the (job, scheduled time) pairs fired more than
// once.
func (r *QueueResult) checkFirings(firings []Firing) {
	type slot struct {
		job string
		at  int64
	}
	seen := map[slot][]string{}
	for _, f := range firings {
		k := slot{f.Job, f.ScheduledAt}
		seen[k] = append(seen[k], f.Source)
	}
	var doubled []slot
	for k, srcs := range seen {
		if len(srcs) > 1 {
			doubled = append(doubled, k)
		}
	}
	sort.Slice(doubled, func(i, j int) bool {
		if doubled[i].at != doubled[j].at {
			return doubled[i].at < doubled[j].at
		}
		return doubled[i].job < doubled[j].job
	})
	for _, k := range doubled {
		r.DoubledFirings++
		r.note("job %s fired %d times for scheduled time %d (%v)", k.job, len(seen[k]), k.at, seen[k])
	}
}
