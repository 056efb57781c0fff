package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Queue jobs and their workers over HTTP, on a real node whose leader
// runs the dispatcher and the reaper (docs/jobs.md).

const queuesURL = "/api/v1/admin/queues"

// queueJob is a queue job as the admin API shows it.
type queueJob struct {
	ID           string          `json:"id"`
	Queue        string          `json:"queue"`
	State        string          `json:"state"`
	Payload      json.RawMessage `json:"payload"`
	Attempt      int64           `json:"attempt"`
	Retries      int64           `json:"retries"`
	Backoff      string          `json:"backoff"`
	RetryDelayMs int64           `json:"retryDelayMs"`
	UniqueKey    *string         `json:"uniqueKey"`
	RunAfter     int64           `json:"runAfter"`
	ClaimedBy    *string         `json:"claimedBy"`
	LastError    *string         `json:"lastError"`
	Result       json.RawMessage `json:"result"`
	Finished     *int64          `json:"finished"`
}

// createWorker adds a worker for queue and returns its id.
func createWorker(t testing.TB, s *apitest.Server, queue, code string, concurrency int) string {
	t.Helper()
	w := apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/workers",
		map[string]any{"queue": queue, "code": code, "concurrency": concurrency})["data"])
	return w["id"].(string)
}

// enqueue adds a job and returns its id.
func enqueue(t testing.TB, s *apitest.Server, queue string, body map[string]any) string {
	t.Helper()
	out := apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, http.MethodPost, queuesURL+"/"+queue+"/jobs", body)["data"])
	if out["deduped"] != false {
		t.Fatalf("a new job reported deduped: %v", out)
	}
	return out["jobId"].(string)
}

// getJob reads a queue job.
func getJob(t testing.TB, s *apitest.Server, queue, id string) queueJob {
	t.Helper()
	res, body := s.AdminDo(t, http.MethodGet, queuesURL+"/"+queue+"/jobs/"+id, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("get job %s: %d %s", id, res.StatusCode, body)
	}
	var out struct{ Data queueJob }
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// waitJob waits until job id of queue is in state and returns it.
func waitJob(t testing.TB, s *apitest.Server, queue, id, state string) queueJob {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		j := getJob(t, s, queue, id)
		if j.State == state {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s (attempt %d, error %v), want %s", id, j.State, j.Attempt, deref(j.LastError), state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stays checks that job id of queue stays in state for d.
func stays(t testing.TB, s *apitest.Server, queue, id, state string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if j := getJob(t, s, queue, id); j.State != state {
			t.Fatalf("job %s became %s (attempt %d), want it to stay %s", id, j.State, j.Attempt, state)
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestQueueWorkerRunsJobs(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	createWorker(t, s, "math", `return {double: payload.n * 2, attempt, queue, jobId, same: ctx.queue === queue}`, 1)
	id := enqueue(t, s, "math", map[string]any{"payload": map[string]any{"n": 21}})
	j := waitJob(t, s, "math", id, "succeeded")
	var res map[string]any
	if err := json.Unmarshal(j.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res["double"] != float64(42) || res["attempt"] != float64(1) || res["queue"] != "math" || res["jobId"] != id || res["same"] != true {
		t.Fatalf("result: %s", j.Result)
	}
	if j.Attempt != 1 || j.Finished == nil || j.ClaimedBy != nil || j.Retries != 3 || j.Backoff != "exponential" || j.RetryDelayMs != 1000 {
		t.Fatalf("job: %+v", j)
	}
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "the queue overview counts by state", Admin: true, URL: queuesURL, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"queue":"math"`, `"succeeded":1`, `"queued":0`, `"dead":0`, `"worker":"wrk_`},
		},
		{
			Name: "the list filters by state", Admin: true, URL: queuesURL + "/math/jobs?state=succeeded&perPage=5", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"id":"` + id + `"`, `"totalItems":1`, `"perPage":5`},
		},
		{
			Name: "an empty state list", Admin: true, URL: queuesURL + "/math/jobs?state=dead", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"data":[]`, `"totalItems":0`},
		},
		{
			Name: "an unknown state is refused", Admin: true, URL: queuesURL + "/math/jobs?state=done", ExpectedStatus: http.StatusBadRequest,
		},
		{
			Name: "a malformed page is refused", Admin: true, URL: queuesURL + "/math/jobs?page=0", ExpectedStatus: http.StatusBadRequest,
			ExpectedContent: []string{`"page"`},
		},
		{
			Name: "an unknown job", Admin: true, URL: queuesURL + "/math/jobs/nope", ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "a job through another queue", Admin: true, URL: queuesURL + "/other/jobs/" + id, ExpectedStatus: http.StatusNotFound,
		},
	})
}

func TestQueueDelay(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Now())
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	createWorker(t, s, "later", `return "ran"`, 1)
	id := enqueue(t, s, "later", map[string]any{"payload": nil, "delay": 60})
	if j := getJob(t, s, "later", id); j.RunAfter != clock.Now().Unix()+60 {
		t.Fatalf("runAfter %d, want %d", j.RunAfter, clock.Now().Unix()+60)
	}
	stays(t, s, "later", id, "queued", 600*time.Millisecond)
	clock.Advance(59 * time.Second)
	stays(t, s, "later", id, "queued", 400*time.Millisecond)
	clock.Advance(time.Second)
	waitJob(t, s, "later", id, "succeeded")
}

func TestQueueUniqueKey(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	// No worker: the jobs stay queued.
	id := enqueue(t, s, "q", map[string]any{"payload": 1, "uniqueKey": "order-7"})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "the same key answers the unfinished job", Admin: true, Method: http.MethodPost, URL: queuesURL + "/q/jobs",
			Body: map[string]any{"payload": 2, "uniqueKey": "order-7"}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"jobId":"` + id + `"`, `"deduped":true`},
		},
		{
			Name: "another key is another job", Admin: true, Method: http.MethodPost, URL: queuesURL + "/q/jobs",
			Body: map[string]any{"payload": 3, "uniqueKey": "order-8"}, ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{`"deduped":false`}, NotExpectedContent: []string{id},
		},
		{
			Name: "another queue does not share keys", Admin: true, Method: http.MethodPost, URL: queuesURL + "/q2/jobs",
			Body: map[string]any{"uniqueKey": "order-7"}, ExpectedStatus: http.StatusCreated,
		},
	})
	if j := getJob(t, s, "q", id); string(j.Payload) != "1" || j.UniqueKey == nil || *j.UniqueKey != "order-7" {
		t.Fatalf("the deduplicated enqueue changed the job: %+v", j)
	}
	// Once the job ran, the key is free.
	createWorker(t, s, "q", `return null`, 5)
	waitJob(t, s, "q", id, "succeeded")
	if again := enqueue(t, s, "q", map[string]any{"uniqueKey": "order-7"}); again == id {
		t.Fatal("a finished job's key deduplicated")
	}
}

func TestQueueRetriesAndBackoff(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Now())
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	createWorker(t, s, "flaky", `if (attempt < 3) throw new Error("failure " + attempt); return attempt`, 1)

	// fixed, 0 ms: the retries follow at once.
	fixed := enqueue(t, s, "flaky", map[string]any{"retries": 5, "backoff": "fixed", "retryDelayMs": 0})
	j := waitJob(t, s, "flaky", fixed, "succeeded")
	if j.Attempt != 3 || string(j.Result) != "3" || deref(j.LastError) != "failure 2" {
		t.Fatalf("fixed: %+v", j)
	}

	// exponential from 10 s: the second run 10 s after the first failure,
	// the third 20 s after the second.
	exp := enqueue(t, s, "flaky", map[string]any{"retries": 2, "retryDelayMs": 10000})
	start := clock.Now().Unix()
	waitAttempt := func(attempt int64) queueJob {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			j := getJob(t, s, "flaky", exp)
			if j.Attempt == attempt && j.State == "queued" {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("attempt %d never failed: %+v", attempt, j)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if j := waitAttempt(1); j.RunAfter != start+10 {
		t.Fatalf("after the first failure: runAfter %d, want %d", j.RunAfter, start+10)
	}
	clock.Advance(9 * time.Second)
	stays(t, s, "flaky", exp, "queued", 400*time.Millisecond)
	clock.Advance(time.Second)
	if j := waitAttempt(2); j.RunAfter != start+10+20 {
		t.Fatalf("after the second failure: runAfter %d, want %d", j.RunAfter, start+30)
	}
	clock.Advance(20 * time.Second)
	waitJob(t, s, "flaky", exp, "succeeded")

	apitest.Run(t, s, []apitest.Scenario{{
		Name: "bad options are refused, each named", Admin: true, Method: http.MethodPost, URL: queuesURL + "/flaky/jobs",
		Body:            map[string]any{"retries": -1, "backoff": "linear", "retryDelayMs": 90000000, "delay": -5, "uniqueKey": strings.Repeat("k", 256)},
		ExpectedStatus:  http.StatusUnprocessableEntity,
		ExpectedContent: []string{`"retries"`, `"backoff"`, `"retryDelayMs"`, `"delay"`, `"uniqueKey"`},
	}, {
		Name: "a bad queue name", Admin: true, Method: http.MethodPost, URL: queuesURL + "/-x/jobs", Body: map[string]any{},
		ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"queue"`},
	}})
}

func TestQueueDeadLetterAndRetry(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	wid := createWorker(t, s, "fragile", `throw new Error("always " + payload.x)`, 1)
	id := enqueue(t, s, "fragile", map[string]any{"payload": map[string]any{"x": "broken"}, "retries": 1, "backoff": "fixed", "retryDelayMs": 0})
	j := waitJob(t, s, "fragile", id, "dead")
	if j.Attempt != 2 || deref(j.LastError) != "always broken" || j.Finished == nil {
		t.Fatalf("dead job: %+v", j)
	}
	queued := enqueue(t, s, "other", map[string]any{})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/workers/"+wid, map[string]any{"code": `return "fixed " + payload.x`})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "a job that is not dead is not retried", Admin: true, Method: http.MethodPost,
			URL: queuesURL + "/other/jobs/" + queued + "/retry", ExpectedStatus: http.StatusConflict,
		},
		{
			Name: "an unknown job", Admin: true, Method: http.MethodPost, URL: queuesURL + "/fragile/jobs/nope/retry", ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "a dead job goes back to queued", Admin: true, Method: http.MethodPost, URL: queuesURL + "/fragile/jobs/" + id + "/retry",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"state":"queued"`, `"attempt":0`},
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
		},
	})
	j = waitJob(t, s, "fragile", id, "succeeded")
	if string(j.Result) != `"fixed broken"` || j.Attempt != 1 {
		t.Fatalf("after the retry: %+v", j)
	}
	// The admin's writes are in the audit log under their actions.
	res, body := s.AdminDo(t, http.MethodGet, "/api/v1/admin/audit-log?perPage=50", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatal(res.StatusCode)
	}
	for _, want := range []string{`"action":"queues.retry","target":"` + id + `"`, `"action":"queues.enqueue","target":"fragile"`,
		`"action":"workers.update","target":"` + wid + `"`, `"action":"workers.create"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
}

// TestQueueReaper: a run whose claim ends without a completion (its
// leader died; here the clock jumps past the visibility timeout while the
// code is busy) is queued again by the reaper and run by a new claim; the
// stale completion of the first run changes nothing.
func TestQueueReaper(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Now())
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"execution.timeout_ms": "2000", "queues.visibility_timeout_sec": "30"})
	createWorker(t, s, "slow", `if (attempt === 1) { for (;;) {} } return "attempt " + attempt`, 1)
	id := enqueue(t, s, "slow", map[string]any{"retries": 1})
	j := waitJob(t, s, "slow", id, "running")
	if j.ClaimedBy == nil || *j.ClaimedBy == "" {
		t.Fatalf("a running job names its claimant: %+v", j)
	}
	clock.Advance(31 * time.Second)
	j = waitJob(t, s, "slow", id, "succeeded")
	if j.Attempt != 2 || string(j.Result) != `"attempt 2"` || !strings.Contains(deref(j.LastError), "visibility_timeout_sec") {
		t.Fatalf("after the reaper: %+v", j)
	}
	// Without retries left, the reaper dead-letters.
	last := enqueue(t, s, "slow", map[string]any{"retries": 0})
	waitJob(t, s, "slow", last, "running")
	clock.Advance(31 * time.Second)
	j = waitJob(t, s, "slow", last, "dead")
	if !strings.Contains(deref(j.LastError), "visibility_timeout_sec") {
		t.Fatalf("dead by the reaper: %+v", j)
	}
}

// TestWorkerConcurrency: at most concurrency jobs of a queue run at once,
// and that many do.
func TestWorkerConcurrency(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	createWorker(t, s, "busy", `const start = Date.now(); while (Date.now() < start + 300) {} return {start, end: Date.now()}`, 2)
	var ids []string
	for i := range 6 {
		ids = append(ids, enqueue(t, s, "busy", map[string]any{"payload": i}))
	}
	type span struct{ start, end int64 }
	var spans []span
	for _, id := range ids {
		j := waitJob(t, s, "busy", id, "succeeded")
		var sp struct{ Start, End int64 }
		if err := json.Unmarshal(j.Result, &sp); err != nil {
			t.Fatal(err)
		}
		spans = append(spans, span{sp.Start, sp.End})
	}
	most := 0
	for _, a := range spans {
		n := 0
		for _, b := range spans {
			if b.start <= a.start && a.start < b.end {
				n++
			}
		}
		most = max(most, n)
	}
	if most != 2 {
		t.Fatalf("at most %d jobs ran at once, want 2: %v", most, spans)
	}
}

func TestWorkerAdmin(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	_, dev := newAdmin(t, s, "dev@example.com", "developer")
	_, editor := newAdmin(t, s, "ed@example.com", "editor")
	var wid string
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "code that does not compile names line and column", Admin: true, Method: http.MethodPost, URL: "/api/v1/admin/workers",
			Body: map[string]any{"queue": "q", "code": "const a = 1;\nconst b = ;"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"code":"line 2, column 11: `},
		},
		{
			Name: "queue and code are required", Admin: true, Method: http.MethodPost, URL: "/api/v1/admin/workers",
			Body: map[string]any{"concurrency": 0}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"queue":"is required"`, `"code":"is required"`, `"concurrency"`},
		},
		{
			Name: "a developer creates one", Method: http.MethodPost, URL: "/api/v1/admin/workers", Headers: bearer(dev),
			Body: map[string]any{"queue": "q", "code": "return 1"}, ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{`"id":"wrk_`, `"queue":"q"`, `"concurrency":1`, `"enabled":true`},
			AfterFunc: func(t testing.TB, _ *apitest.Server, body []byte) {
				wid = apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["id"].(string)
			},
		},
		{
			Name: "one worker per queue", Admin: true, Method: http.MethodPost, URL: "/api/v1/admin/workers",
			Body: map[string]any{"queue": "q", "code": "return 2"}, ExpectedStatus: http.StatusConflict,
		},
		{
			Name: "an editor may not read workers", URL: "/api/v1/admin/workers", Headers: bearer(editor), ExpectedStatus: http.StatusForbidden,
		},
		{
			Name: "an editor may not enqueue", Method: http.MethodPost, URL: queuesURL + "/q/jobs", Headers: bearer(editor),
			Body: map[string]any{}, ExpectedStatus: http.StatusForbidden,
		},
		{
			Name: "an editor may not list queues", URL: queuesURL, Headers: bearer(editor), ExpectedStatus: http.StatusForbidden,
		},
		{
			Name: "a developer lists queues", URL: queuesURL, Headers: bearer(dev), ExpectedStatus: http.StatusOK,
		},
	})
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "list", Admin: true, URL: "/api/v1/admin/workers", ExpectedStatus: http.StatusOK, ExpectedContent: []string{wid}},
		{Name: "read", Admin: true, URL: "/api/v1/admin/workers/" + wid, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"code":"return 1"`}},
		{
			Name: "change", Admin: true, Method: http.MethodPatch, URL: "/api/v1/admin/workers/" + wid,
			Body: map[string]any{"concurrency": 4, "enabled": false}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"concurrency":4`, `"enabled":false`, `"code":"return 1"`},
		},
		{
			Name: "bad code on change", Admin: true, Method: http.MethodPatch, URL: "/api/v1/admin/workers/" + wid,
			Body: map[string]any{"code": "return ("}, ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"code":"line 1`},
		},
		{Name: "delete", Admin: true, Method: http.MethodDelete, URL: "/api/v1/admin/workers/" + wid, ExpectedStatus: http.StatusNoContent},
		{Name: "gone", Admin: true, URL: "/api/v1/admin/workers/" + wid, ExpectedStatus: http.StatusNotFound},
		{Name: "delete again", Admin: true, Method: http.MethodDelete, URL: "/api/v1/admin/workers/" + wid, ExpectedStatus: http.StatusNotFound},
		{
			Name: "change a missing one", Admin: true, Method: http.MethodPatch, URL: "/api/v1/admin/workers/" + wid,
			Body: map[string]any{"concurrency": 2}, ExpectedStatus: http.StatusNotFound,
		},
	})
}
