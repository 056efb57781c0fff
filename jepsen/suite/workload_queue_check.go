package suite

import (
	"context"
	"fmt"
	"time"

	"svcd/jepsen/checker"
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
		v.Lost = max(v.Lost, r.Lost+r.Unfinished+r.Unrun)
		v.Duplicates = max(v.Duplicates, r.Duplicates)
		if !r.Valid() {
			v.Valid = false
		}
		v.Notes = append(v.Notes, fmt.Sprintf("%s holds %d jobs: %d acknowledged lost, %d unfinished, %d dead (%d acknowledged without a run record), %d wrong results, %d unexpected; "+
			"%d run records: %d succeeded jobs without theirs, %d jobs run more than once (%d without a failure), %d claims run twice, %d outside the job's claims, %d invented, %d stray; %d firings, %d doubled",
			nd.Name, len(h.Jobs), r.Lost, r.Unfinished, r.Dead, r.DeadUnrun, r.WrongResult, r.Unexpected,
			r.Runs, r.Unrun, r.Duplicates, r.Unexplained, r.ClaimReruns, r.OutsideClaims, r.InventedRuns, r.StrayRuns, r.Firings, r.DoubledFirings))
		for _, n := range r.Notes {
			v.Notes = append(v.Notes, nd.Name+": "+n)
		}
	}
	return v
}
