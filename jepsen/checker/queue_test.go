package checker

import (
	"strings"
	"testing"
)

// cleanHistory is a valid history: j2 ran twice across a claim that
// expired, j3 was dead-lettered after two runs, j4's enqueue timed out
// but was applied, j5 was dead-lettered without a run record.
func cleanHistory() QueueHistory {
	const expired = "the run's claim ended without a completion"
	return QueueHistory{
		Acked:     []Enqueue{{"k1", "j1"}, {"k2", "j2"}, {"k3", "j3"}, {"k5", "j5"}},
		Attempted: map[string]bool{"k1": true, "k2": true, "k3": true, "k4": true, "k5": true},
		Jobs: []JobState{
			{JobID: "j1", Key: "k1", State: "succeeded", Attempt: 1, Result: JobResult{"k1", 1, "r1"}},
			{JobID: "j2", Key: "k2", State: "succeeded", Attempt: 3, LastError: expired, Result: JobResult{"k2", 3, "r2c"}},
			{JobID: "j3", Key: "k3", State: "dead", Attempt: 4, LastError: expired},
			// k4's enqueue timed out but was applied: not acknowledged,
			// not unexpected.
			{JobID: "j4", Key: "k4", State: "succeeded", Attempt: 1, Result: JobResult{"k4", 1, "r4"}},
			{JobID: "j5", Key: "k5", State: "dead", Attempt: 6, LastError: "helpers.records.create: timeout"},
		},
		Runs: []Run{
			{"r1", "k1", "j1", 1},
			// attempt 2 of j2 ran without writing its record (stopped).
			{"r2c", "k2", "j2", 3}, {"r2a", "k2", "j2", 1},
			{"r3a", "k3", "j3", 2}, {"r3b", "k3", "j3", 4},
			{"r4", "k4", "j4", 1},
		},
		Firings: []Firing{{"cron", 100, "q1"}, {"cron", 101, "q2"}, {"other", 100, "q3"}},
	}
}

func TestQueueCheckerAcceptsAValidHistory(t *testing.T) {
	r := CheckQueue(cleanHistory())
	if !r.Valid() {
		t.Fatalf("a valid history was refused: %+v", r)
	}
	if r.Duplicates != 2 || r.Dead != 2 || r.DeadUnrun != 1 || r.Runs != 6 || r.Acknowledged != 4 || r.Firings != 3 || len(r.Notes) != 0 {
		t.Fatalf("counts: %+v", r)
	}
}

// expect checks that h is refused, with count (read from the result by
// field) at 1 and a note containing note.
func expect(t *testing.T, what string, h QueueHistory, field func(QueueResult) int, note string) {
	t.Helper()
	r := CheckQueue(h)
	if r.Valid() || field(r) != 1 {
		t.Errorf("%s went unnoticed: %+v", what, r)
		return
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], note) {
		t.Errorf("%s: notes %q, want one with %q", what, r.Notes, note)
	}
}

func TestQueueCheckerCatchesALostJob(t *testing.T) {
	h := cleanHistory()
	h.Jobs = h.Jobs[1:] // j1 is gone
	h.Runs = h.Runs[1:] // with its record
	expect(t, "a lost job", h, func(r QueueResult) int { return r.Lost }, "acknowledged job j1 (key \"k1\") is gone")

	h = cleanHistory()
	h.Jobs[0].State, h.Jobs[0].Result = "queued", JobResult{}
	h.Runs = h.Runs[1:]
	expect(t, "an unfinished job", h, func(r QueueResult) int { return r.Unfinished }, "is still queued")

	h = cleanHistory()
	h.Runs = h.Runs[1:] // j1 says it succeeded, but its run left no record
	expect(t, "a run without its record", h, func(r QueueResult) int { return r.Unrun }, `job j1 (key "k1") succeeded at attempt 1, but its run record "r1" is not there`)

	h = cleanHistory()
	h.Runs[1].Attempt = 2 // j2's record of its succeeding run is of another attempt
	expect(t, "a result naming another run", h, func(r QueueResult) int { return r.Unrun }, "job j2")

	h = cleanHistory()
	h.Jobs[0].Result.Key = "k2" // ran with another job's payload
	expect(t, "a wrong result", h, func(r QueueResult) int { return r.WrongResult }, "job j1")

	h = cleanHistory()
	h.Jobs = append(h.Jobs, JobState{JobID: "j9", Key: "k9", State: "dead", Attempt: 1})
	expect(t, "an invented job", h, func(r QueueResult) int { return r.Unexpected }, `job j9 has key "k9"`)
}

func TestQueueCheckerCatchesAnInventedRun(t *testing.T) {
	h := cleanHistory()
	h.Runs = append(h.Runs, Run{"r9", "k9", "j1", 1})
	expect(t, "a run of a key nobody enqueued", h, func(r QueueResult) int { return r.InventedRuns }, `run record r9 has key "k9"`)

	h = cleanHistory()
	h.Runs = append(h.Runs, Run{"r9", "k1", "j2", 1})
	expect(t, "a run of another job's key", h, func(r QueueResult) int { return r.StrayRuns }, `but its job j2 has key "k2"`)

	h = cleanHistory()
	h.Runs = append(h.Runs, Run{"r9", "k1", "j7", 1})
	expect(t, "a run of a job the queue lacks", h, func(r QueueResult) int { return r.StrayRuns }, "names job j7")

	h = cleanHistory()
	h.Runs = append(h.Runs, Run{"r9", "k1", "j1", 2})
	r := CheckQueue(h)
	if r.Valid() || r.OutsideClaims != 1 || r.Unexplained != 1 {
		t.Errorf("a run of a claim the job never had went unnoticed: %+v", r)
	}
}

func TestQueueCheckerCatchesADuplicateRun(t *testing.T) {
	h := cleanHistory()
	h.Runs = append(h.Runs, Run{"r1b", "k1", "j1", 1})
	r := CheckQueue(h)
	// One claim ran twice, and j1 never failed.
	if r.Valid() || r.ClaimReruns != 1 || r.Unexplained != 1 || r.Duplicates != 3 {
		t.Errorf("a claim run twice went unnoticed: %+v", r)
	}

	h = cleanHistory()
	h.Jobs[3].Attempt, h.Jobs[3].Result.Attempt = 2, 2
	h.Runs[5].Attempt = 2 // r4
	h.Runs = append(h.Runs, Run{"r4a", "k4", "j4", 1})
	expect(t, "a second run with no failure", h, func(r QueueResult) int { return r.Unexplained }, "job j4 ran 2 times (attempts [1 2]) but never failed")
}

func TestQueueCheckerCatchesADoubledFiring(t *testing.T) {
	h := cleanHistory()
	h.Firings = append(h.Firings, Firing{"cron", 101, "q4"})
	r := CheckQueue(h)
	if r.Valid() || r.DoubledFirings != 1 {
		t.Fatalf("a doubled firing went unnoticed: %+v", r)
	}
	if len(r.Notes) != 1 || r.Notes[0] != "job cron fired 2 times for scheduled time 101 ([q2 q4])" {
		t.Fatalf("notes: %v", r.Notes)
	}
}
