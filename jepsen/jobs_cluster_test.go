package jepsen_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// Scheduled jobs and queue jobs across a leader kill (docs/jobs.md, "In a
// cluster"), on three real svcd processes.

// jobSettings makes the cluster's background work fast enough to watch:
// six-field schedules, short claims.
func jobSettings(t *testing.T, c *harness.Cluster, kv map[string]string) {
	t.Helper()
	leader := c.MustLeader(t, leaderTimeout)
	body := map[string]any{"jobs.cron_seconds": "1"}
	for k, v := range kv {
		body[k] = v
	}
	waitIndexAll(t, c, mustDo(t, c.Admin(leader), "PATCH", "/api/v1/admin/settings", body, http.StatusOK).Index())
}

// clusterRun is a run of a scheduled job as the admin API lists it.
type clusterRun struct {
	Key         string  `json:"key"`
	ScheduledAt int64   `json:"scheduled_at"`
	State       string  `json:"state"`
	Node        *string `json:"node"`
	QueueJobID  *string `json:"queue_job_id"`
}

func listRuns(t *testing.T, cl *harness.Client, job string) []clusterRun {
	t.Helper()
	var out struct {
		Data struct {
			Data []clusterRun `json:"data"`
		} `json:"data"`
	}
	if err := mustDo(t, cl, "GET", "/api/v1/admin/jobs/"+job+"/runs?perPage=500", nil, http.StatusOK).JSON(&out); err != nil {
		t.Fatal(err)
	}
	return out.Data.Data
}

// TestCronFiresOnceAcrossLeaderKill: a job scheduled every second, whose
// inline runs take 1.5 s, and a worker-mode one on the same schedule,
// while the leader is SIGKILLed: no scheduled time fires twice (one run
// per key, one queue job per scheduled time), the new leader goes on
// firing, and the inline runs the dead leader had started end lost, not
// run again (at most once).
func TestCronFiresOnceAcrossLeaderKill(t *testing.T) {
	c := startCluster(t, 3)
	jobSettings(t, c, map[string]string{"queues.visibility_timeout_sec": "3", "execution.timeout_ms": "2500"})
	leader := c.MustLeader(t, leaderTimeout)
	admin := c.Admin(leader)
	spin := `const end = Date.now() + 1500; while (Date.now() < end) {} return scheduledAt`
	var inline, queued struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	mustDo(t, admin, "POST", "/api/v1/admin/workers", map[string]any{"queue": "ticks", "code": "return payload.scheduledAt", "concurrency": 4}, http.StatusCreated)
	if err := mustDo(t, admin, "POST", "/api/v1/admin/jobs", map[string]any{"name": "inline", "cron": "* * * * * *", "code": spin}, http.StatusCreated).JSON(&inline); err != nil {
		t.Fatal(err)
	}
	if err := mustDo(t, admin, "POST", "/api/v1/admin/jobs", map[string]any{"name": "queued", "cron": "* * * * * *", "mode": "worker:ticks"}, http.StatusCreated).JSON(&queued); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	killed := leader.Name
	before := listRuns(t, c.Admin(c.Followers()[0]), inline.Data.ID)
	t.Logf("killing leader %s after %d inline runs", killed, len(before))
	c.Kill(t, killed)
	next := c.MustLeader(t, leaderTimeout)
	time.Sleep(6 * time.Second)
	admin = c.Admin(next)
	mustDo(t, admin, "PATCH", "/api/v1/admin/jobs/"+inline.Data.ID, map[string]any{"enabled": false}, http.StatusOK)
	idx := mustDo(t, admin, "PATCH", "/api/v1/admin/jobs/"+queued.Data.ID, map[string]any{"enabled": false}, http.StatusOK).Index()
	waitIndexAll(t, c, idx)
	time.Sleep(4 * time.Second) // runs in flight end, the reaper marks the dead leader's lost

	runs := listRuns(t, admin, inline.Data.ID)
	byKey := map[string]int{}
	states := map[string]int{}
	var afterKill, lostOnKilled int
	for _, r := range runs {
		byKey[r.Key]++
		states[r.State]++
		if r.Node != nil && *r.Node == next.Name {
			afterKill++
		}
		if r.State == "lost" && (r.Node == nil || *r.Node != killed) {
			t.Errorf("run %s is lost but ran on %v, not on the killed leader", r.Key, r.Node)
		}
		if r.State == "lost" {
			lostOnKilled++
		}
		if r.State == "running" || r.State == "pending" {
			t.Errorf("run %s still %s", r.Key, r.State)
		}
	}
	for k, n := range byKey {
		if n > 1 {
			t.Errorf("scheduled time %s fired %d times", k, n)
		}
	}
	if afterKill < 3 {
		t.Errorf("the new leader %s ran %d firings, want at least 3: %v", next.Name, afterKill, states)
	}
	t.Logf("inline runs by state %v; %d on the new leader; %d lost with the killed leader", states, afterKill, lostOnKilled)

	// The worker-mode job: one queue job per scheduled time, each run to
	// success by the queue.
	qruns := listRuns(t, admin, queued.Data.ID)
	perTime := map[int64]int{}
	for _, r := range qruns {
		if r.State != "enqueued" || r.QueueJobID == nil {
			t.Errorf("worker-mode run %+v", r)
			continue
		}
		perTime[r.ScheduledAt]++
	}
	var jobs struct {
		Data struct {
			Data []struct {
				State   string          `json:"state"`
				Payload json.RawMessage `json:"payload"`
			} `json:"data"`
		} `json:"data"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := mustDo(t, admin, "GET", "/api/v1/admin/queues/ticks/jobs?perPage=500", nil, http.StatusOK).JSON(&jobs); err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, j := range jobs.Data.Data {
			if j.State == "succeeded" {
				done++
			}
		}
		if done == len(jobs.Data.Data) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	seen := map[int64]int{}
	for _, j := range jobs.Data.Data {
		var p struct {
			ScheduledAt int64 `json:"scheduledAt"`
		}
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			t.Fatal(err)
		}
		seen[p.ScheduledAt]++
		if j.State != "succeeded" {
			t.Errorf("queue job of %d is %s", p.ScheduledAt, j.State)
		}
	}
	var times []int64
	for at, n := range seen {
		times = append(times, at)
		if n != 1 || perTime[at] != 1 {
			t.Errorf("scheduled time %d: %d queue jobs, %d runs", at, n, perTime[at])
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	t.Logf("worker mode: %d scheduled times, one queue job each (%v...)", len(times), times[:min(len(times), 3)])
	if len(times) < 6 {
		t.Errorf("only %d firings in worker mode", len(times))
	}
}

// TestQueueJobRunByNextLeader: a queue job claimed by the leader, which is
// SIGKILLed mid-run, stays claimed while its claim stands (no other node
// runs it meanwhile), then the next leader's reaper releases it after the
// visibility timeout and its dispatcher runs it to success (attempt 2).
func TestQueueJobRunByNextLeader(t *testing.T) {
	c := startCluster(t, 3)
	const visibility = 8 * time.Second
	jobSettings(t, c, map[string]string{"queues.visibility_timeout_sec": "8", "execution.timeout_ms": "0"})
	leader := c.MustLeader(t, leaderTimeout)
	admin := c.Admin(leader)
	mustDo(t, admin, "POST", "/api/v1/admin/workers", map[string]any{"queue": "slow",
		"code": `if (attempt === 1) { for (;;) {} } return "attempt " + attempt`}, http.StatusCreated)
	var enq struct {
		Data struct {
			JobID string `json:"jobId"`
		} `json:"data"`
	}
	fol := c.Followers()[0]
	if err := mustDo(t, c.Admin(fol), "POST", "/api/v1/admin/queues/slow/jobs", map[string]any{"payload": "x"}, http.StatusCreated).JSON(&enq); err != nil {
		t.Fatal(err)
	}
	type job struct {
		State      string  `json:"state"`
		Attempt    int64   `json:"attempt"`
		ClaimedBy  *string `json:"claimedBy"`
		ClaimUntil *int64  `json:"claimUntil"`
		LastError  *string `json:"lastError"`
		Result     string  `json:"result"`
	}
	get := func(cl *harness.Client) job {
		var out struct {
			Data struct {
				job
				Result json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := mustDo(t, cl, "GET", "/api/v1/admin/queues/slow/jobs/"+enq.Data.JobID, nil, http.StatusOK).JSON(&out); err != nil {
			t.Fatal(err)
		}
		j := out.Data.job
		j.Result = string(out.Data.Result)
		return j
	}
	var claimed job
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		claimed = get(c.Admin(fol))
		if claimed.State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job was not claimed: %+v", claimed)
		}
	}
	if claimed.ClaimedBy == nil || *claimed.ClaimedBy != leader.Name || claimed.Attempt != 1 {
		t.Fatalf("claimed: %+v (leader %s)", claimed, leader.Name)
	}
	killedAt := time.Now()
	c.Kill(t, leader.Name)
	next := c.MustLeader(t, leaderTimeout)
	// While the claim stands nobody else runs it.
	if j := get(c.Admin(next)); time.Now().Unix() < *claimed.ClaimUntil-1 && (j.State != "running" || j.Attempt != 1) {
		t.Fatalf("before the claim's end (%d): %+v", *claimed.ClaimUntil, j)
	}
	var done job
	for deadline := time.Now().Add(visibility + 15*time.Second); ; time.Sleep(100 * time.Millisecond) {
		done = get(c.Admin(next))
		if done.State == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the next leader did not run the job: %+v", done)
		}
	}
	took := time.Since(killedAt)
	if done.Attempt != 2 || done.Result != `"attempt 2"` || done.LastError == nil || !strings.Contains(*done.LastError, "visibility_timeout_sec") {
		t.Fatalf("after the reaper: %+v", done)
	}
	if took < visibility-2*time.Second {
		t.Fatalf("run again %s after the kill, before the visibility timeout of %s", took, visibility)
	}
	t.Logf("leader %s killed mid-run; %s ran attempt 2 %s later", leader.Name, next.Name, took.Round(100*time.Millisecond))
}
