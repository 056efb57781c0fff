package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/fsm"
)

// dispatchOne queues custom event "e" to the node's webhooks and returns
// the one delivery id.
func dispatchOne(t testing.TB, s *apitest.Server) string {
	t.Helper()
	ids, _, err := s.Stack.Webhooks.DispatchEvent(context.Background(), "e", map[string]any{"n": 1})
	if err != nil || len(ids) != 1 {
		t.Fatalf("dispatch: %v %v", ids, err)
	}
	return ids[0]
}

// TestWebhookRetryThenSuccess: failures reschedule (retrying) until an
// attempt succeeds; every attempt carries the same delivery id and a
// fresh signature; the answer's first 2 KB are kept.
func TestWebhookRetryThenSuccess(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	big := strings.Repeat("é", 3000) // 6000 bytes
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(big))
			return
		}
		w.Write([]byte("finally"))
	})
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "retry_max": 3,
		"retry_backoff": "fixed", "retry_delay_ms": 100, "secret": "k"})["id"].(string)
	id := dispatchOne(t, s)

	d := waitDelivery(t, s, hook, id, func(d map[string]any) bool { return d["status"] == "retrying" })
	if d["response_status"] == nil || apitest.Int(t, d["response_status"]) != 503 || d["error"] != "HTTP 503" ||
		len(d["response_body"].(string)) > 2048 || len(d["response_body"].(string)) < 2045 ||
		!strings.HasPrefix(big, d["response_body"].(string)) || d["next_attempt_at"] == nil {
		t.Errorf("a failed attempt: status %v error %v body %d bytes next %v", d["response_status"], d["error"],
			len(d["response_body"].(string)), d["next_attempt_at"])
	}
	d = waitDelivery(t, s, hook, id, inState("succeeded"))
	if apitest.Int(t, d["attempt"]) != 3 || apitest.Int(t, d["response_status"]) != 200 || d["response_body"] != "finally" ||
		d["error"] != "" || d["next_attempt_at"] != nil {
		t.Errorf("succeeded on the third attempt: %v", d)
	}
	got := rc.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	for _, r := range got {
		if r.Header.Get("X-Svc-Delivery") != id || r.payload(t)["id"] != id {
			t.Errorf("attempt with delivery id %q, want %q", r.Header.Get("X-Svc-Delivery"), id)
		}
		checkSignature(t, r, "k", time.Now())
	}
}

// TestWebhookDead: every attempt fails; after retry_max attempts the
// delivery is dead and nothing more is sent.
func TestWebhookDead(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "retry_max": 2,
		"retry_backoff": "fixed", "retry_delay_ms": 0})["id"].(string)
	id := dispatchOne(t, s)
	d := waitDelivery(t, s, hook, id, inState("dead"))
	if apitest.Int(t, d["attempt"]) != 2 || d["next_attempt_at"] != nil || apitest.Int(t, d["response_status"]) != 500 {
		t.Errorf("dead: %v", d)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(rc.requests()); n != 2 {
		t.Errorf("%d attempts, want retry_max = 2", n)
	}
}

// TestWebhookRedirectNotFollowed: a 3xx is a failed attempt, and the
// redirect's target is never asked.
func TestWebhookRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	target := newReceiver(t, nil)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	})
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "retry_max": 1})["id"].(string)
	id := dispatchOne(t, s)
	d := waitDelivery(t, s, hook, id, inState("dead"))
	if apitest.Int(t, d["response_status"]) != 307 || !strings.Contains(d["error"].(string), "redirects are not followed") {
		t.Errorf("a redirect: %v", d)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect was followed (%d requests)", n)
	}
}

// TestWebhookTimeout: an attempt that outlasts timeout_ms (floored at
// 1000) fails with no status.
func TestWebhookTimeout(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	})
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "retry_max": 1, "timeout_ms": 10})
	if apitest.Int(t, hook["timeout_ms"]) != 1000 {
		t.Fatalf("timeout_ms %v, want the floor 1000", hook["timeout_ms"])
	}
	start := time.Now()
	id := dispatchOne(t, s)
	d := waitDelivery(t, s, hook["id"].(string), id, inState("dead"))
	took := time.Since(start)
	if d["response_status"] != nil || !strings.Contains(d["error"].(string), "timed out after 1000 ms") {
		t.Errorf("a timeout: %v", d)
	}
	if took < time.Second || took > 4*time.Second {
		t.Errorf("the attempt ended after %v, want about 1 s", took)
	}
}

// TestWebhookSlowReceiverDoesNotStall: attempts run concurrently: a
// receiver that takes its time does not hold up another webhook's.
func TestWebhookSlowReceiverDoesNotStall(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	release := make(chan struct{})
	slow := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
	})
	defer close(release)
	fast := newReceiver(t, nil)
	createWebhook(t, s, map[string]any{"url": slow.URL, "events": []string{"e"}})
	createWebhook(t, s, map[string]any{"url": fast.URL, "events": []string{"e"}})
	for range 3 {
		if err := s.Stack.Webhooks.Dispatch(context.Background(), "e", nil); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	fast.waitRequests(t, 3)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the fast receiver waited %v behind the slow one", took)
	}
	if n := len(slow.requests()); n == 0 {
		t.Error("the slow receiver was never asked")
	}
}

// TestWebhookBackoff: next_attempt_at follows the webhook's backoff:
// exponential doubles retry_delay_ms after each attempt, fixed keeps it.
// A clock the test moves stands for waiting.
func TestWebhookBackoff(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Unix(1_800_000_000, 0))
	s := startWebhookNode(t, apitest.Options{Clock: clock.Now})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	for _, c := range []struct {
		backoff string
		waits   []int64 // seconds after each failed attempt
	}{
		{"exponential", []int64{10, 20, 40}},
		{"fixed", []int64{10, 10, 10}},
	} {
		hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"b." + c.backoff}, "retry_max": 4,
			"retry_backoff": c.backoff, "retry_delay_ms": 10000})["id"].(string)
		ids, _, err := s.Stack.Webhooks.DispatchEvent(context.Background(), "b."+c.backoff, nil)
		if err != nil || len(ids) != 1 {
			t.Fatalf("dispatch: %v %v", ids, err)
		}
		for i, wait := range c.waits {
			attempt := int64(i + 1)
			// Recorded: retrying, and the next attempt in the future (while
			// an attempt is in flight its number shows already, with the
			// time it fell due).
			d := waitDelivery(t, s, hook, ids[0], func(d map[string]any) bool {
				return d["status"] == "retrying" && apitest.Int(t, d["attempt"]) == attempt &&
					apitest.Int(t, d["next_attempt_at"]) > clock.Now().Unix()
			})
			now := clock.Now().Unix()
			if next := apitest.Int(t, d["next_attempt_at"]); next != now+wait {
				t.Errorf("%s: after attempt %d the next is at +%d s, want +%d s", c.backoff, attempt, next-now, wait)
			}
			// Not due yet: nothing is sent.
			time.Sleep(150 * time.Millisecond)
			if d := waitDelivery(t, s, hook, ids[0], func(map[string]any) bool { return true }); apitest.Int(t, d["attempt"]) != attempt {
				t.Fatalf("%s: attempt %v sent before it was due", c.backoff, d["attempt"])
			}
			clock.Advance(time.Duration(wait) * time.Second)
		}
		d := waitDelivery(t, s, hook, ids[0], inState("dead"))
		if apitest.Int(t, d["attempt"]) != 4 {
			t.Errorf("%s: dead after %v attempts, want 4", c.backoff, d["attempt"])
		}
	}
}

// TestWebhookEgressGuard: a receiver on a denied address (loopback, by
// default) gets nothing: the attempt fails naming the setting that would
// allow it. Allowed, it is reached.
func TestWebhookEgressGuard(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{WebhookInterval: 50 * time.Millisecond})
	rc := newReceiver(t, nil)
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "retry_max": 2,
		"retry_backoff": "fixed", "retry_delay_ms": 0})["id"].(string)
	id := dispatchOne(t, s)
	d := waitDelivery(t, s, hook, id, inState("dead"))
	if !strings.Contains(d["error"].(string), "denied range") || !strings.Contains(d["error"].(string), "hooks.http.allow") ||
		d["response_status"] != nil {
		t.Errorf("a denied receiver: %v", d)
	}
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("the guard let %d requests through", n)
	}
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"hooks.http.allow": "127.0.0.1"})
	id = dispatchOne(t, s)
	waitDelivery(t, s, hook, id, inState("succeeded"))
	if n := len(rc.requests()); n != 1 {
		t.Errorf("allowed: %d requests, want 1", n)
	}
}

// TestWebhookSecretAtRest: with an encryption key the secret is sealed in
// the database, and deliveries are still signed with the secret as given.
func TestWebhookSecretAtRest(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{EncryptionKey: strings.Repeat("k", 32)})
	rc := newReceiver(t, nil)
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "secret": "plain-secret"})
	var stored string
	err := s.Stack.Store.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT secret FROM _svc_webhooks WHERE id = ?`, hook["id"]).Scan(&stored)
	})
	if err != nil || !strings.HasPrefix(stored, "enc:") || strings.Contains(stored, "plain-secret") {
		t.Fatalf("stored secret %q (%v): want it sealed", stored, err)
	}
	dispatchOne(t, s)
	checkSignature(t, rc.waitRequests(t, 1)[0], "plain-secret", time.Now())
	got := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, webhooksURL+"/"+hook["id"].(string)+"?reveal=1", nil)["data"])
	if got["secret"] != "plain-secret" {
		t.Errorf("revealed secret %v", got["secret"])
	}
}

// TestWebhookDeleteDropsDeliveries: deleting a webhook deletes its
// deliveries, pending ones too: nothing more is sent.
func TestWebhookDeleteDropsDeliveries(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"e"}, "retry_max": 25,
		"retry_backoff": "fixed", "retry_delay_ms": 50})["id"].(string)
	dispatchOne(t, s)
	rc.waitRequests(t, 2)
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, webhooksURL+"/"+hook, nil)
	n := len(rc.requests())
	time.Sleep(400 * time.Millisecond)
	if m := len(rc.requests()); m > n+1 { // one attempt may have been in flight
		t.Errorf("%d attempts after the delete", m-n)
	}
	var left int
	s.Stack.Store.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM _svc_webhook_deliveries WHERE webhook_id = ?`, hook).Scan(&left)
	})
	if left != 0 {
		t.Errorf("%d deliveries left", left)
	}
}
