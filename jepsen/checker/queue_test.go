package checker

import "testing"

func cleanHistory() QueueHistory {
	return QueueHistory{
		Acked:     []Enqueue{{"k1", "j1"}, {"k2", "j2"}, {"k3", "j3"}},
		Attempted: map[string]bool{"k1": true, "k2": true, "k3": true, "k4": true},
		Jobs: []JobState{
			{JobID: "j1", Key: "k1", State: "succeeded", Attempt: 1, Result: "k1"},
			{JobID: "j2", Key: "k2", State: "succeeded", Attempt: 2, Result: "k2"},
			{JobID: "j3", Key: "k3", State: "dead", Attempt: 4},
			// k4's enqueue timed out but was applied: not acknowledged,
			// not unexpected.
			{JobID: "j4", Key: "k4", State: "succeeded", Attempt: 1, Result: "k4"},
		},
		Firings: []Firing{{"cron", 100, "q1"}, {"cron", 101, "q2"}, {"other", 100, "q3"}},
	}
}

func TestQueueCheckerAcceptsAValidHistory(t *testing.T) {
	r := CheckQueue(cleanHistory())
	if !r.Valid() {
		t.Fatalf("a valid history was refused: %+v", r)
	}
	if r.Duplicates != 2 || r.Dead != 1 || r.Acknowledged != 3 || r.Firings != 3 {
		t.Fatalf("counts: %+v", r)
	}
}

func TestQueueCheckerCatchesALostJob(t *testing.T) {
	h := cleanHistory()
	h.Jobs = h.Jobs[1:] // j1 is gone
	r := CheckQueue(h)
	if r.Valid() || r.Lost != 1 {
		t.Fatalf("a lost job went unnoticed: %+v", r)
	}
	h = cleanHistory()
	h.Jobs[0].State = "queued" // never run
	if r := CheckQueue(h); r.Valid() || r.Unfinished != 1 {
		t.Fatalf("an unfinished job went unnoticed: %+v", r)
	}
	h = cleanHistory()
	h.Jobs[0].Result = "k2" // ran with another job's payload
	if r := CheckQueue(h); r.Valid() || r.WrongResult != 1 {
		t.Fatalf("a wrong result went unnoticed: %+v", r)
	}
	h = cleanHistory()
	h.Jobs = append(h.Jobs, JobState{JobID: "j9", Key: "k9", State: "succeeded", Attempt: 1, Result: "k9"})
	if r := CheckQueue(h); r.Valid() || r.Unexpected != 1 {
		t.Fatalf("an invented job went unnoticed: %+v", r)
	}
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
