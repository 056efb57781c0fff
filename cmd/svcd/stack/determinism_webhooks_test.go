package stack_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/fsm"
)

// TestDeterministicReplayWebhooks drives the webhooks module into a node
// whose dispatcher sends to a real receiver that fails one attempt in
// three: record creates, updates and deletes (some refused at apply
// time), failing batches, custom events, webhook changes and a deletion,
// with the dispatcher's claims and outcomes interleaved. Replaying the
// log into two fresh replicas must give identical digests: the outbox,
// the delivery ids, the attempts and states are the same on every
// replica, whatever the batching.
func TestDeterministicReplayWebhooks(t *testing.T) {
	seed := detSeed(t, 20261127)
	var hits atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer rc.Close()
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir, WebhookInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := node.Engine.PatchSettings(ctx, []byte(`{"hooks.http.allow":"127.0.0.1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node.Engine.Schema().CreateCollection(ctx, []byte(`{"name":"docs_w","type":"base",
		"fields":[{"name":"title","type":"text","unique":true,"max":6}]}`)); err != nil {
		t.Fatal(err)
	}
	wh := node.Webhooks
	var hooks []string
	for _, events := range []string{`["*"]`, `["docs_w.create"]`, `["docs_w.*","job.*"]`} {
		w, _, err := wh.Create(ctx, []byte(`{"url":"`+rc.URL+`","events":`+events+`,"retry_max":3,"retry_backoff":"fixed","retry_delay_ms":0}`))
		if err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, w.ID)
	}
	admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner}
	outcomes := map[uint64]detOutcome{}
	var mu sync.Mutex
	var records []string
	note := func(op string, idx uint64, err error) {
		mu.Lock()
		defer mu.Unlock()
		if idx > 0 {
			outcomes[idx] = detOutcome{op: op, result: replOutcome(err)}
		}
	}
	rs := node.Engine.Records()
	run := func(r *rand.Rand, n int) {
		for i := 0; i < n; i++ {
			mu.Lock()
			var rec string
			if len(records) > 0 {
				rec = records[r.IntN(len(records))]
			}
			mu.Unlock()
			title := fmt.Sprintf("t%d", r.IntN(60)) // some collide: refused at apply time
			switch k := r.IntN(7); {
			case k == 0 || rec == "":
				got, idx, err := rs.CreateRecord(ctx, admin, "docs_w", []byte(`{"title":"`+title+`"}`))
				note("create", idx, err)
				if err == nil {
					mu.Lock()
					records = append(records, string(got.JSON[7:22]))
					mu.Unlock()
				}
			case k == 1:
				_, idx, err := rs.UpdateRecord(ctx, admin, "docs_w", rec, []byte(`{"title":"`+title+`"}`), "")
				note("update", idx, err)
			case k == 2:
				idx, err := rs.DeleteRecord(ctx, admin, "docs_w", rec, "")
				note("delete", idx, err)
			case k == 3:
				_, idx, err := wh.DispatchEvent(ctx, "job.done", map[string]any{"n": r.IntN(1000)})
				note("dispatch", idx, err)
			case k == 4:
				second := []string{"ok", "too-long"}[r.IntN(2)] // too long fails the batch at validation
				_, idx, err := rs.Batch(ctx, admin, []engine.BatchOp{
					{Action: engine.BatchCreate, Collection: "docs_w", Body: []byte(fmt.Sprintf(`{"title":"b%d"}`, r.IntN(1000)))},
					{Action: engine.BatchCreate, Collection: "docs_w", Body: []byte(`{"title":"` + second + `"}`)},
				})
				note("batch", idx, err)
			case k == 5:
				_, idx, err := wh.Update(ctx, hooks[1], []byte(fmt.Sprintf(`{"enabled":%v}`, r.IntN(2) == 0)))
				note("webhook update", idx, err)
			default:
				_, idx, err := wh.Update(ctx, hooks[2], []byte(fmt.Sprintf(`{"retry_max":%d}`, 1+r.IntN(3))))
				note("webhook retries", idx, err)
			}
		}
	}
	run(rand.New(rand.NewPCG(seed, 0)), 30)
	var wg sync.WaitGroup
	for g := 1; g <= 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			run(rand.New(rand.NewPCG(seed, uint64(g))), 30)
		}(g)
	}
	wg.Wait()
	if _, err := wh.Delete(ctx, hooks[0]); err != nil {
		t.Fatal(err)
	}
	// Deliveries of a disabled webhook wait: enable it to let them go.
	if _, _, err := wh.Update(ctx, hooks[1], []byte(`{"enabled":true}`)); err != nil {
		t.Fatal(err)
	}
	// Let the dispatcher finish what it can, then stop the node.
	deadline := time.Now().Add(30 * time.Second)
	for pending(t, node) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	node.close(t)
	if hits.Load() == 0 {
		t.Fatal("the receiver got nothing")
	}
	kinds := map[string]int{}
	for _, o := range outcomes {
		kinds[o.op+": "+o.result]++
	}
	t.Logf("outcomes: %v; %d attempts", kinds, hits.Load())
	for _, want := range []string{"create: ok", "update: ok", "delete: ok", "dispatch: ok", "batch: ok", "webhook update: ok"} {
		if kinds[want] == 0 {
			t.Errorf("no %q in the workload", want)
		}
	}
	rep := replayCheck(t, dir, seed, 16, outcomes)
	for _, table := range []string{"table:_svc_webhooks", "table:_svc_webhook_patterns", "table:_svc_webhook_deliveries"} {
		if rep.digest[table] == "" {
			t.Errorf("the digest has no %s: %v", table, rep.digest)
		}
	}
}

// pending counts the deliveries not yet final.
func pending(t *testing.T, node *replNode) int {
	t.Helper()
	var n int
	err := node.Store.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM _svc_webhook_deliveries WHERE status IN ('pending', 'retrying')`).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
