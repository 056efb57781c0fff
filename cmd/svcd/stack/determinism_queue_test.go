package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine/queue"
)

// TestDeterministicReplayQueue drives the queue module (enqueues with
// every option, unique keys that collide, workers that fail and succeed,
// retries of dead jobs, scheduled jobs firing every second inline and in
// worker mode, run-nows, changes and deletes) while the node's leader
// loops claim, complete, fire and reap, then replays its log into two
// fresh replicas and requires identical digests: the jobs, their states,
// the firings and their runs are the same on every replica, whatever the
// batching.
func TestDeterministicReplayQueue(t *testing.T) {
	seed := detSeed(t, 20261127)
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q := node.Queue
	if _, _, err := node.Engine.PatchSettings(ctx, []byte(`{"jobs.cron_seconds":"1","queues.visibility_timeout_sec":"1"}`)); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	i64 := func(n int64) *int64 { return &n }
	for _, w := range []queue.WorkerInput{
		{Queue: str("even"), Code: str(`if (payload.n % 2) throw new Error("odd " + payload.n); return payload.n`), Concurrency: i64(3)},
		{Queue: str("all"), Code: str(`return {n: payload.n, attempt}`), Concurrency: i64(2)},
	} {
		if _, _, err := q.CreateWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	inline, _, err := q.CreateCronJob(ctx, queue.CronJobInput{Name: str("inline"), Cron: str("* * * * * *"), Code: str("return scheduledAt")})
	if err != nil {
		t.Fatal(err)
	}
	viaQueue, _, err := q.CreateCronJob(ctx, queue.CronJobInput{Name: str("queued"), Cron: str("*/2 * * * * *"), Mode: str("worker:all")})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[uint64]detOutcome{}
	var mu sync.Mutex
	note := func(op string, idx uint64, err error) {
		mu.Lock()
		defer mu.Unlock()
		if idx > 0 {
			outcomes[idx] = detOutcome{op: op, result: replOutcome(err)}
		}
	}
	run := func(r *rand.Rand, n int) {
		for range n {
			switch k := r.IntN(10); {
			case k < 6:
				opts := queue.EnqueueOptions{Retries: i64(int64(r.IntN(2))), Backoff: []string{"fixed", "exponential"}[r.IntN(2)], RetryDelayMs: i64(int64(r.IntN(50)))}
				if r.IntN(3) == 0 {
					opts.UniqueKey = fmt.Sprintf("k%d", r.IntN(10))
				}
				if r.IntN(5) == 0 {
					d := 0.2
					opts.Delay = &d
				}
				name := []string{"even", "all", "nobody"}[r.IntN(3)]
				_, idx, err := q.EnqueueJSON(ctx, name, json.RawMessage(fmt.Sprintf(`{"n":%d}`, r.IntN(100))), opts)
				note("enqueue", idx, err)
			case k == 6:
				page, err := q.Jobs(ctx, "even", queue.JobQuery{State: queue.StateDead, PerPage: 5})
				if err != nil {
					t.Error(err)
					continue
				}
				for _, j := range page.Data {
					_, idx, err := q.RetryDead(ctx, "even", j.ID)
					note("retry", idx, err)
				}
			case k == 7:
				_, idx, err := q.RunNow(ctx, []string{inline.ID, viaQueue.ID}[r.IntN(2)])
				note("run now", idx, err)
			case k == 8:
				_, idx, err := q.UpdateCronJob(ctx, inline.ID, queue.CronJobInput{Code: str(fmt.Sprintf("return %d", r.IntN(9)))})
				note("update job", idx, err)
			default:
				time.Sleep(time.Duration(r.IntN(100)) * time.Millisecond)
			}
		}
	}
	run(rand.New(rand.NewPCG(seed, 0)), 40)
	var wg sync.WaitGroup
	for g := 1; g <= 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			run(rand.New(rand.NewPCG(seed, uint64(g))), 40)
		}(g)
	}
	wg.Wait()
	time.Sleep(2500 * time.Millisecond) // the loops claim, complete, fire and reap
	if idx, err := q.DeleteCronJob(ctx, viaQueue.ID); err != nil {
		t.Fatal(err)
	} else {
		note("delete job", idx, err)
	}
	stats, err := q.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := q.Runs(ctx, inline.ID, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	node.close(t)
	t.Logf("queues: %+v; inline runs: %d", stats, runs.TotalItems)
	var succeeded, dead int64
	for _, s := range stats {
		succeeded += s.Counts[queue.StateSucceeded]
		dead += s.Counts[queue.StateDead]
	}
	if succeeded == 0 || dead == 0 || runs.TotalItems < 2 {
		t.Errorf("the workload did not run jobs to success and to death and fire: %d succeeded, %d dead, %d runs", succeeded, dead, runs.TotalItems)
	}
	rep := replayCheck(t, dir, seed, 16, outcomes)
	for _, table := range []string{"table:_svc_queue_jobs", "table:_svc_queue_workers", "table:_svc_jobs", "table:_svc_job_runs"} {
		if rep.digest[table] == "" {
			t.Errorf("the digest has no %s: %v", table, rep.digest)
		}
	}
}
