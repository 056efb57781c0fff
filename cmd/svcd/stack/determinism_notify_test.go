package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/notify"
	"svcd/internal/push/pushtest"
)

// TestDeterministicReplayNotify drives the notifications module
// (enabling providers, which creates the collections; devices registered,
// rebound between users and unregistered, concurrently; notifications
// with inbox rows and push jobs, some of whose tokens the FCM stand-in
// reports dead) while the leader's dispatcher runs the push jobs, then
// replays the log into two fresh replicas and requires identical
// digests.
func TestDeterministicReplayNotify(t *testing.T) {
	seed := detSeed(t, 20261201)
	fcm, hosted := pushtest.NewFCM(t), pushtest.NewHosted(t)
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := node.Engine.PatchSettings(ctx, []byte(`{"hooks.http.allow":"127.0.0.1","notifications.push.retry_delay_ms":"20","notifications.push.retries":"1"}`))
	must(err)
	_, _, err = node.Engine.Schema().CreateCollection(ctx, []byte(`{"name":"users","type":"auth","fields":[]}`))
	must(err)
	admin := engine.Principal{Kind: engine.AdminPrincipal, Role: engine.RoleOwner}
	var users []engine.Principal
	for i := range 4 {
		rec, _, err := node.Engine.Records().CreateRecord(ctx, admin, "users",
			[]byte(fmt.Sprintf(`{"email":"u%d@example.com","password":"a-long-password-%d"}`, i, i)))
		must(err)
		var r struct{ ID string }
		must(json.Unmarshal(rec.JSON, &r))
		users = append(users, engine.Principal{Kind: engine.User, ID: r.ID, Collection: "users"})
	}
	n := node.Notify
	fcmCfg, _ := json.Marshal(map[string]any{"enabled": true, "service_account": fcm.ServiceAccount, "endpoint": fcm.URL()})
	_, _, err = n.PatchProvider(ctx, "fcm", fcmCfg)
	must(err)
	hostedCfg, _ := json.Marshal(map[string]any{"enabled": true, "app_id": hosted.AppID, "api_key": hosted.APIKey, "endpoint": hosted.URL()})
	_, _, err = n.PatchProvider(ctx, "hostedpush", hostedCfg)
	must(err)
	for i := range 10 {
		if i%3 == 0 {
			fcm.Reply(fmt.Sprintf("tok%d", i), pushtest.Reply{Status: http.StatusNotFound, Code: "UNREGISTERED"})
		}
		if i%4 == 0 {
			fcm.Reply(fmt.Sprintf("tok%d", i), pushtest.Reply{Status: http.StatusServiceUnavailable})
		}
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
	var jobs sync.Map
	run := func(r *rand.Rand, count int) {
		for range count {
			u := users[r.IntN(len(users))]
			tok := fmt.Sprintf("tok%d", r.IntN(10))
			switch k := r.IntN(10); {
			case k < 5:
				body := fmt.Sprintf(`{"token":%q,"provider":%q,"platform":"android","app_version":"%d"}`, tok, []string{"fcm", "apns"}[r.IntN(2)], r.IntN(3))
				_, _, idx, err := n.RegisterDevice(ctx, u, []byte(body))
				note("register", idx, err)
			case k < 7:
				idx, err := n.UnregisterDevice(ctx, u, tok)
				note("unregister", idx, err)
			default:
				res, err := n.Notify(ctx, u.ID, notify.Message{Title: "t", Body: fmt.Sprint(r.IntN(100)), Data: map[string]any{"type": "x", "n": r.IntN(5)}},
					notify.SendOptions{Inbox: func(b bool) *bool { return &b }(r.IntN(2) == 0)})
				if err != nil {
					t.Error(err)
					continue
				}
				for _, q := range res.Enqueued {
					jobs.Store(q.JobID, q.Provider)
				}
			}
		}
	}
	run(rand.New(rand.NewPCG(seed, 0)), 20)
	var wg sync.WaitGroup
	for g := 1; g <= 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			run(rand.New(rand.NewPCG(seed, uint64(g))), 30)
		}(g)
	}
	wg.Wait()
	// The dispatcher runs every push job to its end.
	deadline := time.Now().Add(30 * time.Second)
	for {
		pending := 0
		jobs.Range(func(id, provider any) bool {
			j, err := node.Queue.GetJob(ctx, notify.Queue(provider.(string)), id.(string))
			if err != nil || (j.State != "succeeded" && j.State != "dead") {
				pending++
			}
			return true
		})
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d push jobs unfinished", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
	node.close(t)
	if len(fcm.Received()) == 0 || len(hosted.Received()) == 0 {
		t.Errorf("the workload pushed nothing: fcm %d, hosted %d", len(fcm.Received()), len(hosted.Received()))
	}
	rep := replayCheck(t, dir, seed, 16, outcomes)
	for _, table := range []string{"table:" + notify.InboxCollection, "table:" + notify.DevicesCollection, "table:_svc_queue_jobs"} {
		if rep.digest[table] == "" {
			t.Errorf("the digest has no %s", table)
		}
	}
}
