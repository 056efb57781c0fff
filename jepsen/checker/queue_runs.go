package checker

import "sort"

// checkRuns judges the run records against the jobs (byID) and returns
// them by job id. A run record is written by a run of the worker: its key
// must be one a client tried and the key of the job it names; its attempt
// must be a claim that job had, and no claim runs twice; a succeeded
// job's succeeding run wrote its record before returning (the result
// names it). More than one record for a job is a duplicate run, allowed
// only when the job failed at some point (its last error is kept): each
// run beyond the first then followed a claim that expired or a run that
// threw.
func (r *QueueResult) checkRuns(h QueueHistory, byID map[string]JobState) map[string][]Run {
	runs := map[string][]Run{}
	for _, run := range h.Runs {
		if !h.Attempted[run.Key] {
			r.InventedRuns++
			r.note("run record %s has key %q, which no client enqueued", run.ID, run.Key)
			continue
		}
		j, ok := byID[run.JobID]
		switch {
		case !ok:
			r.StrayRuns++
			r.note("run record %s (key %q) names job %s, which the queue does not hold", run.ID, run.Key, run.JobID)
			continue
		case j.Key != run.Key:
			r.StrayRuns++
			r.note("run record %s has key %q, but its job %s has key %q", run.ID, run.Key, run.JobID, j.Key)
			continue
		case run.Attempt < 1 || run.Attempt > j.Attempt:
			r.OutsideClaims++
			r.note("run record %s of job %s has attempt %d; the job was claimed %d times", run.ID, run.JobID, run.Attempt, j.Attempt)
		}
		runs[run.JobID] = append(runs[run.JobID], run)
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		list := runs[id]
		sort.Slice(list, func(a, b int) bool { return list[a].Attempt < list[b].Attempt })
		for i := 1; i < len(list); i++ {
			if list[i].Attempt == list[i-1].Attempt {
				r.ClaimReruns++
				r.note("job %s: run records %s and %s are both of attempt %d", id, list[i-1].ID, list[i].ID, list[i].Attempt)
			}
		}
		if len(list) > 1 {
			r.Duplicates++
			if byID[id].LastError == "" {
				r.Unexplained++
				r.note("job %s ran %d times (attempts %v) but never failed", id, len(list), attempts(list))
			}
		}
	}
	for _, j := range h.Jobs {
		if j.State != "succeeded" {
			continue
		}
		found := false
		for _, run := range runs[j.JobID] {
			if run.ID == j.Result.Run && run.Attempt == j.Attempt {
				found = true
			}
		}
		if !found {
			r.Unrun++
			r.note("job %s (key %q) succeeded at attempt %d, but its run record %q is not there (records: %v)",
				j.JobID, j.Key, j.Attempt, j.Result.Run, attempts(runs[j.JobID]))
		}
	}
	return runs
}

// attempts lists the attempts of runs.
func attempts(runs []Run) []int {
	out := make([]int, len(runs))
	for i, run := range runs {
		out[i] = run.Attempt
	}
	return out
}
