package jepsen_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"svcd/jepsen/checker"
	"svcd/jepsen/harness"
)

// TestWebhooksSurviveLeaderKill: three real nodes; records created
// through every node queue deliveries to a receiver that holds each
// request open, so the leader has attempts in flight and more pending
// when it is SIGKILLed. The new leader sends them all (taking over the
// dead leader's claims at once, not after their lease): none is lost,
// every signature verifies, and the attempts that were in flight reach
// the receiver again with the same delivery id, across the leader
// change.
func TestWebhooksSurviveLeaderKill(t *testing.T) {
	c := startCluster(t, 3)
	rc, err := harness.StartWebhookReceiver("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rc.Hold()
	leader := c.MustLeader(t, leaderTimeout)
	mustDo(t, c.Admin(leader), "PATCH", "/api/v1/admin/settings", map[string]any{"hooks.http.allow": "127.0.0.1"}, http.StatusOK)
	createCollectionAll(t, c, `{"name":"hooked","type":"base","create_rule":"","fields":[{"name":"k","type":"text"}]}`)
	const secret = "cluster-secret"
	follower := c.Followers()[0]
	hook := mustDo(t, c.Admin(follower), "POST", "/api/v1/admin/webhooks", map[string]any{
		"url": rc.URL, "events": []string{"hooked.create"}, "secret": secret,
		"retry_max": 5, "retry_backoff": "fixed", "retry_delay_ms": 200}, http.StatusCreated)
	var wh struct {
		Data struct{ ID string }
	}
	if err := hook.JSON(&wh); err != nil {
		t.Fatal(err)
	}

	committed := map[string]bool{}
	var last uint64
	nodes := c.Nodes()
	for i := range 30 {
		k := fmt.Sprintf("k%02d", i)
		resp := mustDo(t, c.Client(nodes[i%len(nodes)]), "POST", "/api/v1/hooked", map[string]any{"k": k}, http.StatusCreated)
		committed[k] = true
		last = max(last, resp.Index())
	}
	waitIndexAll(t, c, last)
	// The leader has attempts in flight (held open) and more pending.
	deadline := time.Now().Add(20 * time.Second)
	for len(rc.Receipts()) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the leader sent %d deliveries, want some in flight", len(rc.Receipts()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	inFlight := map[string]bool{}
	for _, r := range rc.Receipts() {
		inFlight[r.Delivery] = true
	}
	killed := leader.Name
	killedAt := time.Now()
	c.Kill(t, killed)
	rc.Release()
	newLeader := c.MustLeader(t, leaderTimeout)
	if newLeader.Name == killed {
		t.Fatalf("%s still leads", killed)
	}
	t.Logf("killed leader %s with %d attempts in flight; %s leads", killed, len(inFlight), newLeader.Name)

	keys := func() map[string]int {
		got := map[string]int{}
		for _, r := range rc.Receipts() {
			if checker.SignatureValid(secret, r.Timestamp, r.Signature, r.Body) {
				got[r.Delivery]++
			}
		}
		return got
	}
	deadline = time.Now().Add(45 * time.Second)
	for {
		res := checker.CheckWebhooks(checker.WebhookHistory{Secret: secret, Receipts: rc.Receipts(), KeyField: "k",
			Committed: committed, Attempted: committed, Elections: []time.Time{killedAt}, Slack: 2 * time.Second})
		if len(res.Missing) == 0 {
			t.Logf("after the kill: %s (%s)", res, time.Since(killedAt).Round(time.Millisecond))
			if !res.Valid() {
				t.Fatalf("webhook history: %s; unexpected %v, unexplained %v", res, res.Unexpected, res.Unexplained)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries missing 45 s after the leader was killed: %s: %v", res, res.Missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := keys()
	for id := range inFlight {
		if got[id] < 2 {
			t.Errorf("delivery %s was in flight on the dead leader and was not sent again (%d receipts)", id, got[id])
		}
	}
	// Every delivery ends succeeded, as every surviving node records it.
	for _, nd := range c.Running() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			resp := mustDo(t, c.Admin(nd), "GET", "/api/v1/admin/webhooks/"+wh.Data.ID+"/deliveries?limit=500", nil, http.StatusOK)
			var list struct {
				Data []struct {
					ID, Status string
				}
			}
			if err := resp.JSON(&list); err != nil {
				t.Fatal(err)
			}
			done := 0
			for _, d := range list.Data {
				if d.Status == "succeeded" {
					done++
				}
			}
			if len(list.Data) == len(committed) && done == len(committed) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d deliveries, %d succeeded; want %d", nd.Name, len(list.Data), done, len(committed))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
