package queue

import (
	"testing"
	"time"

	"svcd/engine"
)

func (v *env) cronJob(in CronJobInput) *CronJob {
	v.t.Helper()
	j, _, err := v.q.CreateCronJob(v.ctx, in)
	v.ok(err)
	return j
}

func str(s string) *string { return &s }

func (v *env) runs(id string) []Run {
	v.t.Helper()
	p, err := v.q.Runs(v.ctx, id, 1, 500)
	v.ok(err)
	return p.Data
}

func TestCronFiresOncePerScheduledTime(t *testing.T) {
	v := newEnv(t)
	j := v.cronJob(CronJobInput{Name: str("tick"), Cron: str("*/5 * * * *"), Code: str("return scheduledAt")})
	start := v.clk.now()
	if j.NextRunAt == nil || *j.NextRunAt != start.Add(5*time.Minute).Unix() {
		t.Fatalf("next run: %v", j.NextRunAt)
	}
	if runs, err := v.q.FireDue(v.ctx, "n1"); err != nil || len(runs) != 0 {
		t.Fatalf("fired before its time: %v %v", runs, err)
	}
	v.clk.advance(5*time.Minute + 2*time.Second)
	// Two leaders read the same row (an old one that has not noticed yet,
	// and a new one): only one firing commits.
	stale, err := v.q.cronRows(v.ctx, `id = ?`, j.ID)
	v.ok(err)
	runs, err := v.q.FireDue(v.ctx, "n1")
	v.ok(err)
	if len(runs) != 1 || runs[0].ScheduledAt != *j.NextRunAt || runs[0].Code != "return scheduledAt" {
		t.Fatalf("first leader: %+v", runs)
	}
	for _, c := range v.q.plan(stale[0], v.clk.now(), "n2") {
		v2, _, err := v.q.core.Propose(v.ctx, cmdFire, c)
		v.ok(err)
		if v2.(*fireResult).Fired {
			t.Fatal("a second leader fired the same scheduled time")
		}
	}
	if again, err := v.q.FireDue(v.ctx, "n2"); err != nil || len(again) != 0 {
		t.Fatalf("fired again: %v %v", again, err)
	}
	got, err := v.q.CronJob(v.ctx, j.ID)
	v.ok(err)
	if *got.NextRunAt != *j.NextRunAt+300 || got.LastRunAt == nil {
		t.Fatalf("after the firing: %+v", got)
	}
	v.ok(v.q.FinishRun(v.ctx, runs[0], map[string]any{"ok": true}, nil))
	rs := v.runs(j.ID)
	if len(rs) != 1 || rs[0].State != RunSucceeded || string(rs[0].Result) != `{"ok":true}` || rs[0].Node == nil || *rs[0].Node != "n1" {
		t.Fatalf("runs: %+v", rs)
	}
}

func TestMissedFiringsSkippedUnlessCatchUp(t *testing.T) {
	v := newEnv(t)
	plain := v.cronJob(CronJobInput{Name: str("plain"), Cron: str("* * * * *"), Code: str("return 1")})
	v.cronJob(CronJobInput{Name: str("catch"), Cron: str("* * * * *"), Code: str("return 1"), CatchUp: i64(2)})
	// No leader for ten and a half minutes: ten firings missed, the one
	// of 12:10 is 30 s late (on time).
	v.clk.advance(10*time.Minute + 30*time.Second)
	runs, err := v.q.FireDue(v.ctx, "n1")
	v.ok(err)
	var plainRuns, catchRuns []int64
	for _, r := range runs {
		if r.JobID == plain.ID {
			plainRuns = append(plainRuns, r.ScheduledAt)
		} else {
			catchRuns = append(catchRuns, r.ScheduledAt)
		}
	}
	base := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC).Unix()
	if len(plainRuns) != 1 || plainRuns[0] != base+600 {
		t.Fatalf("without catch_up: %v", plainRuns)
	}
	if len(catchRuns) != 3 || catchRuns[0] != base+480 || catchRuns[1] != base+540 || catchRuns[2] != base+600 {
		t.Fatalf("catch_up 2: %v", catchRuns)
	}
	// A minute and a half late: missed, skipped, next run moves on.
	v.clk.advance(2 * time.Minute)
	runs, err = v.q.FireDue(v.ctx, "n1")
	v.ok(err)
	for _, r := range runs {
		if r.JobID == plain.ID && r.ScheduledAt != base+720 {
			t.Fatalf("plain fired %d", r.ScheduledAt)
		}
	}
	got, err := v.q.CronJob(v.ctx, plain.ID)
	v.ok(err)
	if *got.NextRunAt != base+780 {
		t.Fatalf("next run after a skip: %d", *got.NextRunAt)
	}
}

func TestOneOffFiresOnceAndIsDisabled(t *testing.T) {
	v := newEnv(t)
	at := v.clk.now().Add(time.Minute).Unix()
	j := v.cronJob(CronJobInput{Name: str("once"), RunAt: &at, Mode: str("worker:mail")})
	v.clk.advance(61 * time.Second)
	runs, err := v.q.FireDue(v.ctx, "n1")
	v.ok(err)
	if len(runs) != 0 {
		t.Fatalf("a worker-mode job runs no inline code: %+v", runs)
	}
	got, err := v.q.CronJob(v.ctx, j.ID)
	v.ok(err)
	if got.Enabled || got.NextRunAt != nil || got.LastRunAt == nil {
		t.Fatalf("after its run: %+v", got)
	}
	rs := v.runs(j.ID)
	if len(rs) != 1 || rs[0].State != RunEnqueued || rs[0].QueueJobID == nil {
		t.Fatalf("runs: %+v", rs)
	}
	qj := v.job("mail", *rs[0].QueueJobID)
	if string(qj.Payload) != `{"jobId":"`+j.ID+`","name":"once","scheduledAt":`+itoa(at)+`}` {
		t.Fatalf("queue job payload: %s", qj.Payload)
	}
	// Enabling it again with its past time is refused.
	on := true
	if _, _, err := v.q.UpdateCronJob(v.ctx, j.ID, CronJobInput{Enabled: &on}); kind(err) != engine.KindValidation {
		t.Fatalf("re-enable in the past: %v", err)
	}
	// A one-off whose time passed while no leader ran is missed.
	at2 := v.clk.now().Add(time.Minute).Unix()
	m := v.cronJob(CronJobInput{Name: str("missed"), RunAt: &at2, Code: str("return 1")})
	v.clk.advance(5 * time.Minute)
	runs, err = v.q.FireDue(v.ctx, "n1")
	v.ok(err)
	if len(runs) != 0 {
		t.Fatalf("a missed one-off ran: %+v", runs)
	}
	if rs := v.runs(m.ID); len(rs) != 1 || rs[0].State != RunMissed {
		t.Fatalf("missed runs: %+v", rs)
	}
}

func itoa(n int64) string { return scheduledKey(n) }

func TestRunNowAndLostRuns(t *testing.T) {
	v := newEnv(t)
	_, _, err := v.e.PatchSettings(v.ctx, []byte(`{"queues.visibility_timeout_sec":"10"}`))
	v.ok(err)
	j := v.cronJob(CronJobInput{Name: str("manual"), Cron: str("0 0 1 1 *"), Code: str("return 2")})
	run, _, err := v.q.RunNow(v.ctx, j.ID)
	v.ok(err)
	if run.State != RunPending || !run.Manual {
		t.Fatalf("run-now: %+v", run)
	}
	runs, err := v.q.FireDue(v.ctx, "n1")
	v.ok(err)
	if len(runs) != 1 || runs[0].Key != run.Key || !runs[0].Manual {
		t.Fatalf("started: %+v", runs)
	}
	if again, _ := v.q.FireDue(v.ctx, "n2"); len(again) != 0 {
		t.Fatal("a pending run started twice")
	}
	// Its leader dies: the run is marked lost after the visibility
	// timeout and is not run again.
	v.clk.advance(11 * time.Second)
	_, err = v.q.Reap(v.ctx)
	v.ok(err)
	if rs := v.runs(j.ID); rs[0].State != RunLost {
		t.Fatalf("after the reaper: %+v", rs[0])
	}
	if again, _ := v.q.FireDue(v.ctx, "n2"); len(again) != 0 {
		t.Fatal("a lost run started again")
	}
	if _, _, err := v.q.RunNow(v.ctx, "job_nope"); kind(err) != engine.KindNotFound {
		t.Fatalf("run-now of a missing job: %v", err)
	}
}

func TestScheduleValidation(t *testing.T) {
	v := newEnv(t)
	for _, bad := range []string{"* * * *", "@daily", "CRON_TZ=Europe/Paris * * * * *", "*/5 * * * * *", "61 * * * *"} {
		_, _, err := v.q.CreateCronJob(v.ctx, CronJobInput{Name: str("x"), Cron: str(bad), Code: str("return 1")})
		if de := engine.AsError(err); de == nil || de.Details["cron"] == nil {
			t.Errorf("cron %q: %v", bad, err)
		}
	}
	_, _, err := v.e.PatchSettings(v.ctx, []byte(`{"jobs.cron_seconds":"1"}`))
	v.ok(err)
	j := v.cronJob(CronJobInput{Name: str("fast"), Cron: str("*/2 * * * * *"), Code: str("return 1")})
	if *j.NextRunAt != v.clk.now().Unix()+2 {
		t.Fatalf("seconds schedule next: %d", *j.NextRunAt)
	}
	if _, _, err := v.q.CreateCronJob(v.ctx, CronJobInput{Name: str("fast"), Cron: str("* * * * *"), Code: str("return 1")}); kind(err) != engine.KindConflict {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, _, err := v.q.CreateCronJob(v.ctx, CronJobInput{Name: str("y"), Cron: str("* * * * *")}); kind(err) != engine.KindValidation {
		t.Fatalf("inline without code: %v", err)
	}
}
