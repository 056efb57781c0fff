package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/engine"
	"svcd/engine/notify"
	"svcd/internal/push/pushtest"
)

// delivery is a push job's result.
func delivery(t *testing.T, j queueJob) notify.Delivery {
	t.Helper()
	var d notify.Delivery
	if err := json.Unmarshal(j.Result, &d); err != nil {
		t.Fatalf("job result %s: %v", j.Result, err)
	}
	return d
}

// enqueuedFor is the job Notify enqueued for provider.
func enqueuedFor(t *testing.T, r *notify.Result, provider string) string {
	t.Helper()
	for _, q := range r.Enqueued {
		if q.Provider == provider {
			return q.JobID
		}
	}
	t.Fatalf("no %s job in %+v", provider, r.Enqueued)
	return ""
}

// Notify through FCM: the inbox row, one job per enabled provider, one
// request per token with the data as strings, a dead token disabled, a
// permanent failure dropped, the job's result.
func TestNotifyFCM(t *testing.T) {
	e := newPushEnv(t)
	e.enable(t, notify.FCM)
	e.enable(t, notify.HostedPush)
	aliceID, alice := e.user(t, "alice@example.com")
	bobID, bob := e.user(t, "bob@example.com")
	live := e.device(t, alice, "fcm", "alice-phone")
	dead := e.device(t, alice, "fcm", "alice-old-phone")
	e.device(t, alice, "fcm", "alice-refused")
	e.device(t, alice, "apns", "alice-ipad") // apns is not enabled
	off := e.device(t, alice, "fcm", "alice-off")
	if e.unregister(t, alice, "alice-off") != http.StatusNoContent {
		t.Fatal("unregister")
	}
	e.device(t, bob, "fcm", "bob-phone")
	e.fcm.Reply("alice-old-phone", pushtest.Reply{Status: http.StatusNotFound, Code: "UNREGISTERED"})
	e.fcm.Reply("alice-refused", pushtest.Reply{Status: http.StatusBadRequest, Code: "INVALID_ARGUMENT"})

	res := e.notify(t, aliceID, notify.Message{Title: "New message", Body: "Bob wrote", Data: map[string]any{"type": "chat", "n": 2, "ok": true}},
		notify.SendOptions{})
	if res.InboxRowID == "" || len(res.Enqueued) != 2 || res.Enqueued[0].Provider != "fcm" || res.Enqueued[1].Provider != "hostedpush" ||
		res.Enqueued[0].Deduped {
		t.Fatalf("notify: %+v", res)
	}
	fcmJob := enqueuedFor(t, res, "fcm")
	j := waitJob(t, e.s, "notifications.fcm", fcmJob, "succeeded")
	d := delivery(t, j)
	if d.Targets != 3 || d.Sent != 1 || d.Disabled != 1 || d.Dropped != 1 || d.Retry != 0 || len(d.Errors) != 2 {
		t.Fatalf("fcm delivery: %+v", d)
	}
	noRefusal(t, e.fcm.Refused())
	got := e.fcm.Received()
	if len(got) != 1 || got[0].Target != "alice-phone" || got[0].Title != "New message" || got[0].Body != "Bob wrote" || got[0].Key != fcmJob {
		t.Fatalf("fcm received %+v", got)
	}
	for k, v := range map[string]string{"type": "chat", "n": "2", "ok": "true"} {
		if got[0].Data[k] != v {
			t.Errorf("data %s = %#v, want %q", k, got[0].Data[k], v)
		}
	}
	// The dead token is disabled; the others are not.
	if r := e.deviceRecord(t, dead["id"].(string)); r["enabled"] != false {
		t.Fatalf("the dead token: %v", r)
	}
	if r := e.deviceRecord(t, live["id"].(string)); r["enabled"] != true {
		t.Fatalf("the live token: %v", r)
	}
	if r := e.deviceRecord(t, off["id"].(string)); r["enabled"] != false {
		t.Fatalf("the unregistered token: %v", r)
	}
	// The hosted provider got the user id, once.
	waitJob(t, e.s, "notifications.hostedpush", enqueuedFor(t, res, "hostedpush"), "succeeded")
	if h := e.hosted.Received(); len(h) != 1 || h[0].Target != aliceID || h[0].Key != enqueuedFor(t, res, "hostedpush") {
		t.Fatalf("hosted received %+v", h)
	}
	// A second push does not go to the disabled token.
	res2 := e.notify(t, aliceID, notify.Message{Title: "Again"}, notify.SendOptions{Providers: []string{"fcm"}, Inbox: boolp(false)})
	if res2.InboxRowID != "" || len(res2.Enqueued) != 1 {
		t.Fatalf("second notify: %+v", res2)
	}
	if d := delivery(t, waitJob(t, e.s, "notifications.fcm", res2.Enqueued[0].JobID, "succeeded")); d.Targets != 2 || d.Sent != 1 {
		t.Fatalf("second delivery: %+v", d)
	}

	// The inbox: alice reads her row (its type from data.type), bob does
	// not; alice may set read_at and nothing else.
	inbox := "/api/v1/" + notify.InboxCollection
	row := apitest.Obj(t, apitest.DecodeMap(t, must(t, e.s, http.MethodGet, inbox+"/"+res.InboxRowID, bearer(alice)))["data"])
	if row["user"] != aliceID || row["type"] != "chat" || row["title"] != "New message" || row["body"] != "Bob wrote" || row["read_at"] != nil {
		t.Fatalf("inbox row: %v", row)
	}
	bobList := apitest.DecodeMap(t, must(t, e.s, http.MethodGet, inbox, bearer(bob)))
	if apitest.Int(t, bobList["totalItems"]) != 0 {
		t.Fatalf("bob sees %v", bobList)
	}
	apitest.Run(t, e.s, []apitest.Scenario{
		{Name: "bob cannot read alice's row", URL: inbox + "/" + res.InboxRowID, Headers: bearer(bob), ExpectedStatus: http.StatusNotFound},
		{Name: "a user cannot create a notification", Method: http.MethodPost, URL: inbox, Headers: bearer(alice),
			Body: map[string]any{"user": aliceID, "title": "spoof"}, ExpectedStatus: http.StatusForbidden},
		{Name: "alice cannot change the title", Method: http.MethodPatch, URL: inbox + "/" + res.InboxRowID, Headers: bearer(alice),
			Body: map[string]any{"title": "changed"}, ExpectedStatus: http.StatusForbidden},
		{Name: "alice cannot give it away", Method: http.MethodPatch, URL: inbox + "/" + res.InboxRowID, Headers: bearer(alice),
			Body: map[string]any{"user": bobID}, ExpectedStatus: http.StatusForbidden},
		{Name: "alice marks it read", Method: http.MethodPatch, URL: inbox + "/" + res.InboxRowID, Headers: bearer(alice),
			Body: map[string]any{"read_at": 1700000000}, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"read_at":1700000000`}},
		{Name: "bob cannot delete it", Method: http.MethodDelete, URL: inbox + "/" + res.InboxRowID, Headers: bearer(bob),
			ExpectedStatus: http.StatusNotFound},
		{Name: "alice deletes it", Method: http.MethodDelete, URL: inbox + "/" + res.InboxRowID, Headers: bearer(alice),
			ExpectedStatus: http.StatusNoContent},
	})
}

// Notify's options and its refusals.
func TestNotifyOptions(t *testing.T) {
	e := newPushEnv(t)
	ctx := context.Background()
	n := e.s.Stack.Notify
	aliceID, _ := e.user(t, "alice@example.com")
	// Before any provider: the inbox is created on first use, no job.
	res := e.notify(t, aliceID, notify.Message{Title: "Welcome", Data: map[string]any{"type": 7}}, notify.SendOptions{})
	if res.InboxRowID == "" || len(res.Enqueued) != 0 {
		t.Fatalf("notify without providers: %+v", res)
	}
	row := apitest.Obj(t, e.s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/"+notify.InboxCollection+"/"+res.InboxRowID, nil)["data"])
	if row["type"] != "" {
		t.Fatalf("a type that is not a string: %v", row)
	}
	if ov := e.s.MustAdmin(t, http.StatusOK, http.MethodGet, providersURL, nil)["data"].(map[string]any); ov["bootstrapped"] != false {
		t.Fatalf("the inbox's first use set up the devices: %v", ov)
	}
	e.enable(t, notify.HostedPush)
	// push: false enqueues nothing; providers limits, skipping disabled
	// ones; inbox and push false do nothing at all.
	if r := e.notify(t, aliceID, notify.Message{Body: "b"}, notify.SendOptions{Push: boolp(false)}); r.InboxRowID == "" || len(r.Enqueued) != 0 {
		t.Fatalf("push false: %+v", r)
	}
	if r := e.notify(t, aliceID, notify.Message{Body: "b"}, notify.SendOptions{Providers: []string{"apns", "fcm"}}); len(r.Enqueued) != 0 {
		t.Fatalf("only disabled providers named: %+v", r)
	}
	if r := e.notify(t, aliceID, notify.Message{Body: "b"}, notify.SendOptions{Inbox: boolp(false), Push: boolp(false)}); r.InboxRowID != "" || len(r.Enqueued) != 0 {
		t.Fatalf("nothing asked: %+v", r)
	}
	for name, c := range map[string]struct {
		user   string
		msg    notify.Message
		opts   notify.SendOptions
		detail string
	}{
		"no user":          {"", notify.Message{Title: "x"}, notify.SendOptions{}, "userId"},
		"unknown user":     {"nosuchuser00000", notify.Message{Title: "x"}, notify.SendOptions{}, "userId"},
		"empty":            {aliceID, notify.Message{}, notify.SendOptions{}, "title"},
		"title too long":   {aliceID, notify.Message{Title: strings.Repeat("t", 1001)}, notify.SendOptions{}, "title"},
		"body too long":    {aliceID, notify.Message{Body: strings.Repeat("b", 4001)}, notify.SendOptions{}, "body"},
		"data too large":   {aliceID, notify.Message{Title: "x", Data: map[string]any{"k": strings.Repeat("d", 4100)}}, notify.SendOptions{}, "data"},
		"unknown provider": {aliceID, notify.Message{Title: "x"}, notify.SendOptions{Providers: []string{"gcm"}}, "providers"},
	} {
		_, err := n.Notify(ctx, c.user, c.msg, c.opts)
		de := engine.AsError(err)
		if de == nil || de.Kind != engine.KindValidation || de.Details[c.detail] == nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// APNs over HTTP/2 and TLS: the provider token, the topic, the collapse
// id, a dead token (410) disabled, a transient failure retried through
// the queue.
func TestNotifyAPNs(t *testing.T) {
	e := newPushEnv(t)
	e.enable(t, notify.APNs)
	aliceID, alice := e.user(t, "alice@example.com")
	e.device(t, alice, "apns", "a1b2c3")
	gone := e.device(t, alice, "apns", "d4e5f6")
	e.device(t, alice, "fcm", "alice-android") // fcm is not enabled
	e.apns.Reply("d4e5f6", pushtest.Reply{Status: http.StatusGone, Code: "Unregistered"})
	e.apns.Reply("a1b2c3", pushtest.Reply{Status: http.StatusServiceUnavailable, Code: "ServiceUnavailable"})

	res := e.notify(t, aliceID, notify.Message{Title: "Hi", Body: "there", Data: map[string]any{"room": "r1"}}, notify.SendOptions{Inbox: boolp(false)})
	if len(res.Enqueued) != 1 || res.Enqueued[0].Provider != "apns" {
		t.Fatalf("notify: %+v", res)
	}
	id := res.Enqueued[0].JobID
	// The first attempt fails for the 503: the job is queued again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		j := getJob(t, e.s, "notifications.apns", id)
		if j.Attempt >= 1 && j.LastError != nil {
			if !strings.Contains(*j.LastError, "503 ServiceUnavailable") {
				t.Fatalf("last error: %s", *j.LastError)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not fail its first attempt: %+v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.apns.Reply("a1b2c3", pushtest.Reply{})
	j := waitJob(t, e.s, "notifications.apns", id, "succeeded")
	if j.Attempt < 2 {
		t.Fatalf("succeeded at attempt %d", j.Attempt)
	}
	if d := delivery(t, j); d.Sent != 1 || d.Targets != 1 {
		t.Fatalf("the retry went to %+v (the dead token was disabled by the first attempt)", d)
	}
	noRefusal(t, e.apns.Refused())
	got := e.apns.Received()
	if len(got) != 1 || got[0].Target != "a1b2c3" || got[0].Key != id || got[0].Title != "Hi" || got[0].Data["room"] != "r1" ||
		got[0].Header.Get("apns-topic") != e.apns.Topic {
		t.Fatalf("apns received %+v", got)
	}
	if r := e.deviceRecord(t, gone["id"].(string)); r["enabled"] != false {
		t.Fatalf("the 410 token: %v", r)
	}
}

// A push that keeps failing dies after its retries (a dead letter), and
// the admin's retry runs it again.
func TestPushDeadLetter(t *testing.T) {
	e := newPushEnv(t)
	e.s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"notifications.push.retries": 1})
	e.enable(t, notify.HostedPush)
	aliceID, _ := e.user(t, "alice@example.com")
	e.hosted.Reply(aliceID, pushtest.Reply{Status: http.StatusTooManyRequests})
	res := e.notify(t, aliceID, notify.Message{Title: "x"}, notify.SendOptions{Inbox: boolp(false)})
	id := res.Enqueued[0].JobID
	j := waitJob(t, e.s, "notifications.hostedpush", id, "dead")
	if j.Attempt != 2 || j.Retries != 1 || !strings.Contains(deref(j.LastError), "429") {
		t.Fatalf("dead job: %+v (%s)", j, deref(j.LastError))
	}
	e.hosted.Reply(aliceID, pushtest.Reply{})
	e.s.MustAdmin(t, http.StatusOK, http.MethodPost, "/api/v1/admin/queues/notifications.hostedpush/jobs/"+id+"/retry", nil)
	waitJob(t, e.s, "notifications.hostedpush", id, "succeeded")
	if got := e.hosted.Received(); len(got) != 1 || got[0].Key != id {
		t.Fatalf("hosted received %+v", got)
	}
	// A permanent failure is dropped at once: the job succeeds, saying so.
	e.hosted.Reply(aliceID, pushtest.Reply{Status: http.StatusBadRequest})
	res = e.notify(t, aliceID, notify.Message{Title: "y"}, notify.SendOptions{Inbox: boolp(false)})
	j = waitJob(t, e.s, "notifications.hostedpush", res.Enqueued[0].JobID, "succeeded")
	if d := delivery(t, j); d.Dropped != 1 || j.Attempt != 1 {
		t.Fatalf("dropped: %+v %+v", j, d)
	}
	// The overview marks the push queues as built-in.
	qs := jsonText(t, e.s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/queues", nil))
	if !strings.Contains(qs, `"queue":"notifications.hostedpush"`) || !strings.Contains(qs, `"builtin":true`) {
		t.Fatalf("queues: %s", qs)
	}
}

// Test-connection probes each provider without sending; the egress
// guard applies to provider URLs.
func TestPushTestConnection(t *testing.T) {
	e := newPushEnv(t)
	for _, p := range []string{"fcm", "apns", "hostedpush"} {
		e.enable(t, p)
	}
	probe := func(name string) map[string]any {
		return apitest.Obj(t, e.s.MustAdmin(t, http.StatusOK, http.MethodPost, providersURL+"/"+name+"/test-connection", nil)["data"])
	}
	for _, p := range []string{"fcm", "apns", "hostedpush"} {
		if r := probe(p); r["ok"] != true || r["provider"] != p {
			t.Fatalf("probe %s: %v", p, r)
		}
	}
	if n := len(e.fcm.Received()) + len(e.apns.Received()) + len(e.hosted.Received()); n != 0 {
		t.Fatalf("a probe sent %d notifications", n)
	}
	if e.fcm.TokenRequests() == 0 {
		t.Fatal("the fcm probe minted no token")
	}
	// A wrong key, and a provider not configured.
	e.s.MustAdmin(t, http.StatusOK, http.MethodPatch, providersURL+"/hostedpush", map[string]any{"api_key": "wrong"})
	if r := probe("hostedpush"); r["ok"] != false || !strings.Contains(r["error"].(string), "refused the REST API key") {
		t.Fatalf("wrong key: %v", r)
	}
	e.s.MustAdmin(t, http.StatusOK, http.MethodPatch, providersURL+"/hostedpush", map[string]any{"enabled": false, "app_id": nil})
	if r := probe("hostedpush"); r["ok"] != false || !strings.Contains(r["error"].(string), "not configured: app_id") {
		t.Fatalf("not configured: %v", r)
	}
	// Without the allow setting, loopback is denied by the guard (at the
	// dial: fresh servers, so no open connection is reused).
	e.s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"hooks.http.allow": nil})
	h2, a2 := pushtest.NewHosted(t), pushtest.NewAPNs(t)
	e.s.MustAdmin(t, http.StatusOK, http.MethodPatch, providersURL+"/hostedpush", map[string]any{"app_id": h2.AppID, "api_key": h2.APIKey, "endpoint": h2.URL()})
	e.s.MustAdmin(t, http.StatusOK, http.MethodPatch, providersURL+"/apns", map[string]any{"host": a2.URL()})
	for _, p := range []string{"hostedpush", "apns"} {
		if r := probe(p); r["ok"] != false || !strings.Contains(r["error"].(string), "denied range") {
			t.Fatalf("probe %s through the guard: %v", p, r)
		}
	}
	// Audited.
	audit := jsonText(t, e.s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/audit-log?actionPrefix=notifications.providers.test", nil))
	if !strings.Contains(audit, `"target":"apns"`) {
		t.Fatalf("audit: %s", audit)
	}
}

// The test send pushes now, without inbox row or job, and says what each
// provider did.
func TestPushTestSend(t *testing.T) {
	e := newPushEnv(t)
	aliceID, alice := e.user(t, "alice@example.com")
	testURL := "/api/v1/admin/notifications/test"
	apitest.Run(t, e.s, []apitest.Scenario{
		{Name: "no provider enabled", Method: http.MethodPost, URL: testURL, Admin: true, Body: map[string]any{"userId": aliceID},
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"no push provider is enabled"}},
	})
	e.enable(t, notify.FCM)
	e.enable(t, notify.APNs)
	e.device(t, alice, "fcm", "alice-phone")
	gone := e.device(t, alice, "fcm", "alice-gone")
	e.fcm.Reply("alice-gone", pushtest.Reply{Status: http.StatusNotFound, Code: "UNREGISTERED"})
	apitest.Run(t, e.s, []apitest.Scenario{
		{Name: "unknown member", Method: http.MethodPost, URL: testURL, Admin: true, Body: map[string]any{"userId": aliceID, "to": "x"},
			ExpectedStatus: http.StatusBadRequest},
		{Name: "no user", Method: http.MethodPost, URL: testURL, Admin: true, Body: map[string]any{"title": "x"},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("userId")},
		{Name: "unknown user", Method: http.MethodPost, URL: testURL, Admin: true, Body: map[string]any{"userId": "nosuchuser00000"},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("userId")},
		{Name: "a provider not enabled", Method: http.MethodPost, URL: testURL, Admin: true,
			Body: map[string]any{"userId": aliceID, "providers": []string{"hostedpush"}}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{"hostedpush is not enabled"}},
		{Name: "send", Method: http.MethodPost, URL: testURL, Admin: true,
			Body: map[string]any{"userId": aliceID, "data": map[string]any{"k": 1}}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`{"provider":"fcm","targets":2,"sent":1,"disabled":1`,
				`{"provider":"apns","targets":0,"sent":0,"disabled":0,"dropped":0,"retry":0,"skipped":"the user has no enabled device of this provider"}`}},
	})
	got := e.fcm.Received()
	if len(got) != 1 || got[0].Title != "Test notification" || got[0].Data["k"] != "1" {
		t.Fatalf("fcm received %+v", got)
	}
	if r := e.deviceRecord(t, gone["id"].(string)); r["enabled"] != false {
		t.Fatalf("the dead token after a test send: %v", r)
	}
	list := e.s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/"+notify.InboxCollection, nil)
	if apitest.Int(t, list["totalItems"]) != 0 {
		t.Fatalf("a test send wrote to the inbox: %v", list)
	}
}

func noRefusal(t *testing.T, refused []string) {
	t.Helper()
	if len(refused) > 0 {
		t.Fatalf("the provider's stand-in refused requests: %q", refused)
	}
}

// Inbox rows reach their owner over realtime (the view rule decides),
// not another user.
func TestInboxRealtime(t *testing.T) {
	e := newPushEnv(t)
	aliceID, alice := e.user(t, "alice@example.com")
	_, bob := e.user(t, "bob@example.com")
	e.notify(t, aliceID, notify.Message{Title: "first"}, notify.SendOptions{}) // creates the inbox
	wa := wsAs(t, e.s, bearer(alice), notify.InboxCollection)
	wb := wsAs(t, e.s, bearer(bob), notify.InboxCollection)
	res := e.notify(t, aliceID, notify.Message{Title: "live"}, notify.SendOptions{})
	m := wa.read()
	rec, _ := m["record"].(map[string]any)
	if m["type"] != "create" || rec["id"] != res.InboxRowID || rec["title"] != "live" {
		t.Fatalf("alice's event: %v", m)
	}
	wb.quiet()
}
