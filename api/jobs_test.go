package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Scheduled jobs (cron and one-off, inline and worker mode, run-now) over
// HTTP, fired by the leader's firer of a real node (docs/jobs.md).

const jobsURL = "/api/v1/admin/jobs"

type cronJob struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Cron      *string `json:"cron"`
	RunAt     *int64  `json:"run_at"`
	Mode      string  `json:"mode"`
	Enabled   bool    `json:"enabled"`
	CatchUp   int64   `json:"catch_up"`
	LastRunAt *int64  `json:"last_run_at"`
	NextRunAt *int64  `json:"next_run_at"`
}

type jobRun struct {
	Job         string          `json:"job"`
	Key         string          `json:"key"`
	ScheduledAt int64           `json:"scheduled_at"`
	Manual      bool            `json:"manual"`
	State       string          `json:"state"`
	QueueJobID  *string         `json:"queue_job_id"`
	Node        *string         `json:"node"`
	Error       *string         `json:"error"`
	Result      json.RawMessage `json:"result"`
}

func createCronJob(t testing.TB, s *apitest.Server, body map[string]any) cronJob {
	t.Helper()
	res, b := s.AdminDo(t, http.MethodPost, jobsURL, body)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create job: %d %s", res.StatusCode, b)
	}
	var out struct{ Data cronJob }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

func getCronJob(t testing.TB, s *apitest.Server, id string) cronJob {
	t.Helper()
	var out struct{ Data cronJob }
	if err := json.Unmarshal(must(t, s, http.MethodGet, jobsURL+"/"+id, s.AdminHeaders(t, nil)), &out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

func jobRuns(t testing.TB, s *apitest.Server, id string) []jobRun {
	t.Helper()
	var out struct{ Data struct{ Data []jobRun } }
	if err := json.Unmarshal(must(t, s, http.MethodGet, jobsURL+"/"+id+"/runs?perPage=200", s.AdminHeaders(t, nil)), &out); err != nil {
		t.Fatal(err)
	}
	return out.Data.Data
}

// waitRuns waits until job id has at least n runs in state, and returns
// its runs (newest first).
func waitRuns(t testing.TB, s *apitest.Server, id, state string, n int) []jobRun {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		runs := jobRuns(t, s, id)
		got := 0
		for _, r := range runs {
			if r.State == state {
				got++
			}
		}
		if got >= n {
			return runs
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %d runs %s, want %d: %+v", id, got, state, n, runs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// secondsSchedules lets jobs have a six-field cron (seconds first).
func secondsSchedules(t testing.TB, s *apitest.Server) {
	t.Helper()
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"jobs.cron_seconds": "1"})
}

func TestCronJobInline(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	secondsSchedules(t, s)
	j := createCronJob(t, s, map[string]any{"name": "every second", "cron": "* * * * * *", "code": `return {scheduledAt, jobId}`})
	if j.Mode != "inline" || !j.Enabled || j.NextRunAt == nil || j.LastRunAt != nil {
		t.Fatalf("created: %+v", j)
	}
	runs := waitRuns(t, s, j.ID, "succeeded", 3)
	seen := map[string]bool{}
	for _, r := range runs {
		if r.State != "succeeded" {
			continue
		}
		if seen[r.Key] {
			t.Fatalf("scheduled time %s ran twice", r.Key)
		}
		seen[r.Key] = true
		var res struct {
			ScheduledAt int64
			JobID       string `json:"jobId"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		if res.ScheduledAt != r.ScheduledAt || res.JobID != j.ID || r.Key != itoa(r.ScheduledAt) || r.Manual || r.Node == nil {
			t.Fatalf("run %+v, result %s", r, r.Result)
		}
	}
	// Disabled: no next run, no more runs.
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, jobsURL+"/"+j.ID, map[string]any{"enabled": false})
	if got := getCronJob(t, s, j.ID); got.NextRunAt != nil || got.LastRunAt == nil {
		t.Fatalf("disabled: %+v", got)
	}
	time.Sleep(300 * time.Millisecond) // a run fired before the change may still end
	before := len(jobRuns(t, s, j.ID))
	time.Sleep(1500 * time.Millisecond)
	if after := len(jobRuns(t, s, j.ID)); after != before {
		t.Fatalf("a disabled job fired: %d runs, then %d", before, after)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestCronJobWorkerMode(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	secondsSchedules(t, s)
	createWorker(t, s, "ticks", `return payload`, 1)
	j := createCronJob(t, s, map[string]any{"name": "ticker", "cron": "* * * * * *", "mode": "worker:ticks"})
	runs := waitRuns(t, s, j.ID, "enqueued", 2)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, jobsURL+"/"+j.ID, map[string]any{"enabled": false})
	for _, r := range runs {
		if r.QueueJobID == nil {
			t.Fatalf("an enqueued run names its queue job: %+v", r)
		}
		qj := waitJob(t, s, "ticks", *r.QueueJobID, "succeeded")
		var p struct {
			JobID       string `json:"jobId"`
			Name        string
			ScheduledAt int64
		}
		if err := json.Unmarshal(qj.Result, &p); err != nil {
			t.Fatal(err)
		}
		if p.JobID != j.ID || p.Name != "ticker" || p.ScheduledAt != r.ScheduledAt {
			t.Fatalf("the worker saw %s for run %+v", qj.Result, r)
		}
	}
}

func TestOneOffJob(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	at := time.Now().Unix() + 1
	j := createCronJob(t, s, map[string]any{"name": "once", "run_at": at, "code": `return "once at " + scheduledAt`})
	if j.NextRunAt == nil || *j.NextRunAt != at || j.Cron != nil {
		t.Fatalf("created: %+v", j)
	}
	runs := waitRuns(t, s, j.ID, "succeeded", 1)
	if len(runs) != 1 || string(runs[0].Result) != `"once at `+itoa(at)+`"` {
		t.Fatalf("runs: %+v", runs)
	}
	got := getCronJob(t, s, j.ID)
	if got.Enabled || got.NextRunAt != nil || got.LastRunAt == nil {
		t.Fatalf("after its run: %+v", got)
	}
	apitest.Run(t, s, []apitest.Scenario{{
		Name: "it cannot be enabled again at its old time", Admin: true, Method: http.MethodPatch, URL: jobsURL + "/" + j.ID,
		Body: map[string]any{"enabled": true}, ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"run_at"`},
	}})
	time.Sleep(500 * time.Millisecond)
	if n := len(jobRuns(t, s, j.ID)); n != 1 {
		t.Fatalf("a one-off ran %d times", n)
	}
}

func TestRunNow(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	j := createCronJob(t, s, map[string]any{"name": "yearly", "cron": "0 0 1 1 *", "code": `return "manual " + jobId`})
	next := getCronJob(t, s, j.ID).NextRunAt
	var run jobRun
	apitest.Run(t, s, []apitest.Scenario{{
		Name: "run now", Admin: true, Method: http.MethodPost, URL: jobsURL + "/" + j.ID + "/run", ExpectedStatus: http.StatusOK,
		ExpectedContent: []string{`"state":"pending"`, `"manual":true`, `"key":"manual-`},
		AfterFunc: func(t testing.TB, _ *apitest.Server, body []byte) {
			var out struct{ Data jobRun }
			json.Unmarshal(body, &out)
			run = out.Data
		},
	}, {
		Name: "run an unknown job", Admin: true, Method: http.MethodPost, URL: jobsURL + "/job_nope/run", ExpectedStatus: http.StatusNotFound,
	}})
	runs := waitRuns(t, s, j.ID, "succeeded", 1)
	if runs[0].Key != run.Key || string(runs[0].Result) != `"manual `+j.ID+`"` {
		t.Fatalf("runs: %+v", runs)
	}
	if got := getCronJob(t, s, j.ID); *got.NextRunAt != *next || got.LastRunAt == nil {
		t.Fatalf("a run-now moved the schedule: %+v", got)
	}
	// Worker mode: the queue job is enqueued by the request itself.
	w := createCronJob(t, s, map[string]any{"name": "via queue", "cron": "0 0 1 1 *", "mode": "worker:reports"})
	out := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodPost, jobsURL+"/"+w.ID+"/run", nil)["data"])
	if out["state"] != "enqueued" || out["queue_job_id"] == nil {
		t.Fatalf("worker-mode run-now: %v", out)
	}
	if qj := getJob(t, s, "reports", out["queue_job_id"].(string)); qj.State != "queued" || !strings.Contains(string(qj.Payload), `"manual":true`) {
		t.Fatalf("its queue job: %+v", qj)
	}
	res, body := s.AdminDo(t, http.MethodGet, "/api/v1/admin/audit-log?actionPrefix=jobs.", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"action":"jobs.run","target":"`+j.ID+`"`) ||
		!strings.Contains(string(body), `"action":"jobs.create"`) {
		t.Fatalf("audit log: %d %s", res.StatusCode, body)
	}
}

// TestJobCatchUp: firings missed while no leader ran are skipped, unless
// the job has catch_up (then that many of the newest missed ones run).
func TestJobCatchUp(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Unix(2_000_000_000, 0).Truncate(time.Minute))
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	plain := createCronJob(t, s, map[string]any{"name": "plain", "cron": "* * * * *", "code": `return scheduledAt`})
	catch := createCronJob(t, s, map[string]any{"name": "catch", "cron": "* * * * *", "code": `return scheduledAt`, "catch_up": 2})
	start := clock.Now().Unix()
	// Ten minutes and 10 s pass at once (as if no leader ran): the 10th
	// minute's firing is 10 s late (on time), the nine before it missed.
	clock.Advance(10*time.Minute + 10*time.Second)
	got := waitRuns(t, s, catch.ID, "succeeded", 3)
	if len(got) != 3 || got[0].ScheduledAt != start+600 || got[1].ScheduledAt != start+540 || got[2].ScheduledAt != start+480 {
		t.Fatalf("catch_up 2: %+v", got)
	}
	if got := waitRuns(t, s, plain.ID, "succeeded", 1); len(got) != 1 || got[0].ScheduledAt != start+600 {
		t.Fatalf("no catch_up: %+v", got)
	}
	// Two minutes and a half later: the last firing is 30 s late (on
	// time), the one before is missed and skipped.
	clock.Advance(2*time.Minute + 20*time.Second)
	got = waitRuns(t, s, plain.ID, "succeeded", 2)
	if len(got) != 2 || got[0].ScheduledAt != start+720 {
		t.Fatalf("no catch_up, later: %+v", got)
	}
	if j := getCronJob(t, s, plain.ID); *j.NextRunAt != start+780 {
		t.Fatalf("next run %d, want %d", *j.NextRunAt, start+780)
	}
}

func TestJobAdmin(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	_, editor := newAdmin(t, s, "ed@example.com", "editor")
	past := time.Now().Unix() - 3600
	var id string
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "a bad schedule", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "x", "cron": "every day", "code": "return 1"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"cron"`},
		},
		{
			Name: "seconds only with jobs.cron_seconds", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "x", "cron": "* * * * * *", "code": "return 1"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`jobs.cron_seconds`},
		},
		{
			Name: "cron or run_at", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "x", "code": "return 1"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"cron":"one of cron and run_at is required"`},
		},
		{
			Name: "not both", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body:           map[string]any{"name": "x", "cron": "* * * * *", "run_at": time.Now().Unix() + 60, "code": "return 1"},
			ExpectedStatus: http.StatusUnprocessableEntity,
		},
		{
			Name: "a one-off in the past", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "x", "run_at": past, "code": "return 1"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"run_at":"must not be in the past"`},
		},
		{
			Name: "a bad mode", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "x", "cron": "* * * * *", "mode": "later", "code": "return 1"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"mode"`},
		},
		{
			Name: "inline needs code", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "x", "cron": "* * * * *"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"code":"is required"`},
		},
		{
			Name: "code that does not compile", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "x", "cron": "* * * * *", "code": "let a = 1;\n\nlet a = 2;"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"code":"line 3, column `},
		},
		{
			Name: "an editor may not", Method: http.MethodPost, URL: jobsURL, Headers: bearer(editor),
			Body: map[string]any{"name": "x", "cron": "* * * * *", "code": "return 1"}, ExpectedStatus: http.StatusForbidden,
		},
		{
			Name: "create", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "nightly", "cron": "0  3 * * *", "code": "return 1", "catch_up": 1}, ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{`"id":"job_`, `"cron":"0 3 * * *"`, `"run_at":null`, `"mode":"inline"`, `"catch_up":1`, `"last_run_at":null`, `"next_run_at":`},
			AfterFunc: func(t testing.TB, _ *apitest.Server, body []byte) {
				id = apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["id"].(string)
			},
		},
		{
			Name: "names are unique", Admin: true, Method: http.MethodPost, URL: jobsURL,
			Body: map[string]any{"name": "nightly", "cron": "0 4 * * *", "code": "return 1"}, ExpectedStatus: http.StatusConflict,
		},
	})
	nextAt := func(h int) int64 {
		n := time.Now().UTC()
		d := time.Date(n.Year(), n.Month(), n.Day(), h, 0, 0, 0, time.UTC)
		if !d.After(n) {
			d = d.AddDate(0, 0, 1)
		}
		return d.Unix()
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "list", Admin: true, URL: jobsURL, ExpectedStatus: http.StatusOK, ExpectedContent: []string{id}},
		{
			Name: "read", Admin: true, URL: jobsURL + "/" + id, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"next_run_at":` + itoa(nextAt(3))},
		},
		{
			Name: "a new schedule moves the next run", Admin: true, Method: http.MethodPatch, URL: jobsURL + "/" + id,
			Body: map[string]any{"cron": "0 5 * * *"}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"cron":"0 5 * * *"`, `"next_run_at":` + itoa(nextAt(5))},
		},
		{
			Name: "run_at replaces cron", Admin: true, Method: http.MethodPatch, URL: jobsURL + "/" + id,
			Body: map[string]any{"run_at": 4102444800}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"cron":null`, `"run_at":4102444800`, `"next_run_at":4102444800`},
		},
		{Name: "runs", Admin: true, URL: jobsURL + "/" + id + "/runs", ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"data":[]`, `"totalItems":0`}},
		{Name: "runs of an unknown job", Admin: true, URL: jobsURL + "/job_nope/runs", ExpectedStatus: http.StatusNotFound},
		{Name: "delete", Admin: true, Method: http.MethodDelete, URL: jobsURL + "/" + id, ExpectedStatus: http.StatusNoContent},
		{Name: "gone", Admin: true, URL: jobsURL + "/" + id, ExpectedStatus: http.StatusNotFound},
		{
			Name: "change a missing one", Admin: true, Method: http.MethodPatch, URL: jobsURL + "/" + id,
			Body: map[string]any{"enabled": false}, ExpectedStatus: http.StatusNotFound,
		},
		{Name: "delete a missing one", Admin: true, Method: http.MethodDelete, URL: jobsURL + "/" + id, ExpectedStatus: http.StatusNotFound},
	})
}
