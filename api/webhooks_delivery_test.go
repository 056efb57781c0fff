package api_test

import (
	"context"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestWebhookDeliveryRequest: a record's create, update and delete reach
// a real receiver with SPEC.md's body, headers and signature; custom
// headers are added, the reserved ones are not overridden; the record is
// the admin's view (hidden fields) without password hashes; a delete
// carries the record as it was.
func TestWebhookDeliveryRequest(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	rc := newReceiver(t, nil)
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text"), f("note", "text", "hidden", true)},
		"create_rule", ""))
	secret := "a shared secret, used as it is"
	hook := createWebhook(t, s, map[string]any{"url": rc.URL + "/in?x=1", "events": []string{"users.*"}, "secret": secret,
		"custom_headers": map[string]any{"X-Tenant": "acme", "Authorization": "Bearer to-the-receiver",
			"X-Svc-Event": "forged", "User-Agent": "forged", "Content-Type": "text/plain"}})
	hookID := hook["id"].(string)

	u := s.CreateRecord(t, "users", map[string]any{"email": "ann@example.com", "password": "a-long-password", "name": "Ann", "note": "vip"})
	uid := u["id"].(string)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/users/"+uid, map[string]any{"name": "Anna"})
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/users/"+uid, nil)

	got := rc.waitRequests(t, 3)
	sort.SliceStable(got, func(i, j int) bool {
		return eventOrder(got[i].Header.Get("X-Svc-Event")) < eventOrder(got[j].Header.Get("X-Svc-Event"))
	})
	ids := map[string]bool{}
	for i, r := range got {
		event := []string{"users.create", "users.update", "users.delete"}[i]
		h := r.Header
		for k, want := range map[string]string{"Content-Type": "application/json", "User-Agent": "svc-webhook",
			"X-Svc-Event": event, "X-Tenant": "acme", "Authorization": "Bearer to-the-receiver"} {
			if h.Get(k) != want {
				t.Errorf("%s: header %s = %q, want %q", event, k, h.Get(k), want)
			}
		}
		if len(h.Values("X-Svc-Event")) != 1 || len(h.Values("Content-Type")) != 1 {
			t.Errorf("%s: a reserved header was doubled: %v", event, h)
		}
		if !strings.HasPrefix(h.Get("X-Svc-Signature"), "sha256=") {
			t.Errorf("%s: signature %q", event, h.Get("X-Svc-Signature"))
		}
		checkSignature(t, r, secret, time.Now())
		p := r.payload(t)
		if p["id"] != h.Get("X-Svc-Delivery") || !uuidPattern.MatchString(h.Get("X-Svc-Delivery")) {
			t.Errorf("%s: body id %v, x-svc-delivery %q", event, p["id"], h.Get("X-Svc-Delivery"))
		}
		ids[h.Get("X-Svc-Delivery")] = true
		if p["event"] != event || apitest.Int(t, p["timestamp"]) < time.Now().Add(-time.Minute).Unix() {
			t.Errorf("%s: body %s", event, r.Body)
		}
		data := apitest.Obj(t, p["data"])
		rec := apitest.Obj(t, data["record"])
		if rec["id"] != uid || rec["collectionName"] != "users" || rec["email"] != "ann@example.com" || rec["note"] != "vip" {
			t.Errorf("%s: record %v", event, rec)
		}
		if strings.Contains(string(r.Body), "argon2") || rec["password"] != nil {
			t.Errorf("%s: the body leaks the password hash: %s", event, r.Body)
		}
		switch event {
		case "users.create":
			if rec["name"] != "Ann" || len(data) != 1 {
				t.Errorf("create data %v", data)
			}
		case "users.update":
			if rec["name"] != "Anna" || len(data) != 1 {
				t.Errorf("update data %v", data)
			}
		case "users.delete":
			if data["id"] != uid || rec["name"] != "Anna" {
				t.Errorf("delete data %v", data)
			}
		}
	}
	if len(ids) != 3 {
		t.Errorf("delivery ids %v: want three distinct", ids)
	}
	for _, d := range deliveries(t, s, hookID) {
		if !ids[d["id"].(string)] {
			t.Errorf("delivery %v was not received", d)
		}
	}
	d := waitDelivery(t, s, hookID, "", inState("succeeded"))
	if apitest.Int(t, d["attempt"]) != 1 || apitest.Int(t, d["response_status"]) != 200 || d["response_body"] != "ok" ||
		d["next_attempt_at"] != nil || d["error"] != "" {
		t.Errorf("a succeeded delivery: %v", d)
	}
	if r := got[0]; r.URI != "/in?x=1" {
		t.Errorf("path %q", r.URI)
	}
}

func eventOrder(e string) int {
	return map[string]int{"users.create": 0, "users.update": 1, "users.delete": 2}[e]
}

// TestWebhookPatterns: exact, <collection>.*, * and custom events; an
// empty list and a disabled webhook get nothing.
func TestWebhookPatterns(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	for _, c := range []string{"posts", "notes"} {
		s.CreateCollection(t, coll(c, "base", []map[string]any{f("title", "text")}))
	}
	type hook struct {
		events  []string
		enabled bool
		want    []string
		rc      *receiver
	}
	hooks := map[string]*hook{
		"exact":    {events: []string{"posts.create"}, enabled: true, want: []string{"posts.create"}},
		"coll":     {events: []string{"posts.*"}, enabled: true, want: []string{"posts.create", "posts.update", "posts.delete"}},
		"all":      {events: []string{"*"}, enabled: true, want: []string{"posts.create", "posts.update", "posts.delete", "notes.create", "order.paid"}},
		"two":      {events: []string{"notes.create", "order.*"}, enabled: true, want: []string{"notes.create", "order.paid"}},
		"custom":   {events: []string{"order.paid"}, enabled: true, want: []string{"order.paid"}},
		"empty":    {events: []string{}, enabled: true},
		"disabled": {events: []string{"*"}, enabled: false},
	}
	for name, h := range hooks {
		h.rc = newReceiver(t, nil)
		createWebhook(t, s, map[string]any{"url": h.rc.URL + "/" + name, "events": h.events, "enabled": h.enabled})
	}
	id := s.CreateRecord(t, "posts", map[string]any{"title": "a"})["id"].(string)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/posts/"+id, map[string]any{"title": "b"})
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/posts/"+id, nil)
	s.CreateRecord(t, "notes", map[string]any{"title": "n"})
	if err := s.Stack.Webhooks.Dispatch(context.Background(), "order.paid", map[string]any{"order": 7, "total": 12.5}); err != nil {
		t.Fatal(err)
	}
	// The custom event is the last change: once every webhook that wants it
	// got it, everything before it was queued too.
	for _, h := range hooks {
		if len(h.want) > 0 {
			h.rc.waitRequests(t, len(h.want))
		}
	}
	time.Sleep(300 * time.Millisecond) // time for a wrong extra delivery to arrive
	for name, h := range hooks {
		var events []string
		for _, r := range h.rc.requests() {
			events = append(events, r.Header.Get("X-Svc-Event"))
			if r.Header.Get("X-Svc-Event") == "order.paid" {
				if data := apitest.Obj(t, r.payload(t)["data"]); jsonString(t, data) != `{"order":7,"total":12.5}` {
					t.Errorf("%s: custom data %v", name, data)
				}
			}
		}
		sort.Strings(events)
		want := append([]string(nil), h.want...)
		sort.Strings(want)
		if strings.Join(events, ",") != strings.Join(want, ",") {
			t.Errorf("%s (%v): got %v, want %v", name, h.events, events, want)
		}
	}
}

// TestWebhookBatchAndImport: a batch and a CSV import fire one event per
// record; a batch that fails queues nothing.
func TestWebhookBatchAndImport(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	rc := newReceiver(t, nil)
	s.CreateCollection(t, coll("items", "base", []map[string]any{f("title", "text", "max", 5)}))
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"items.create"}})["id"].(string)

	var reqs []any
	for i := range 4 {
		reqs = append(reqs, map[string]any{"method": "POST", "url": "/api/v1/items", "body": map[string]any{"title": string(rune('a' + i))}})
	}
	s.MustAdmin(t, http.StatusOK, http.MethodPost, "/api/v1/batch", map[string]any{"requests": reqs})
	bad := append(append([]any(nil), reqs[:2]...), map[string]any{"method": "POST", "url": "/api/v1/items", "body": map[string]any{"title": "too long"}})
	if res, body := s.AdminDo(t, http.MethodPost, "/api/v1/batch", map[string]any{"requests": bad}); res.StatusCode < 400 {
		t.Fatalf("a failing batch: %d %s", res.StatusCode, body)
	}
	res, body := s.Do(t, http.MethodPost, "/api/v1/admin/import/items", "title\nx1\nx2\nx3\n", s.AdminHeaders(t, map[string]string{"Content-Type": "text/csv"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("import: %d %s", res.StatusCode, body)
	}
	rc.waitRequests(t, 7)
	time.Sleep(300 * time.Millisecond)
	titles := map[string]int{}
	for _, r := range rc.requests() {
		titles[apitest.Obj(t, apitest.Obj(t, r.payload(t)["data"])["record"])["title"].(string)]++
	}
	if len(rc.requests()) != 7 || len(titles) != 7 {
		t.Errorf("one delivery per record created (a, b, c, d, x1, x2, x3), none for the failed batch: %v", titles)
	}
	if n := len(deliveries(t, s, hook)); n != 7 {
		t.Errorf("%d deliveries listed, want 7", n)
	}
}

// TestWebhookTestDelivery: the synthetic delivery reaches a disabled
// webhook too, and the answer is the delivery after its first attempt.
func TestWebhookTestDelivery(t *testing.T) {
	t.Parallel()
	s := startWebhookNode(t, apitest.Options{})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"thanks":true}`))
	})
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "enabled": false, "secret": "s3"})["id"].(string)
	out := s.MustAdmin(t, http.StatusOK, http.MethodPost, webhooksURL+"/"+hook+"/test", nil)
	d := apitest.Obj(t, out["data"])
	if d["status"] != "succeeded" || d["event"] != "webhook.test" || apitest.Int(t, d["response_status"]) != 202 ||
		d["response_body"] != `{"thanks":true}` || apitest.Int(t, d["attempt"]) != 1 || d["webhook_id"] != hook {
		t.Errorf("test delivery: %v", d)
	}
	r := rc.waitRequests(t, 1)[0]
	checkSignature(t, r, "s3", time.Now())
	p := r.payload(t)
	if p["event"] != "webhook.test" || p["id"] != d["id"] || apitest.Obj(t, p["data"])["webhook_id"] != hook {
		t.Errorf("test body %s", r.Body)
	}
}

// TestWebhookDeliveriesList: newest first, limit and since.
func TestWebhookDeliveriesList(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Unix(1_800_000_000, 0))
	s := startWebhookNode(t, apitest.Options{Clock: clock.Now})
	rc := newReceiver(t, nil)
	hook := createWebhook(t, s, map[string]any{"url": rc.URL, "events": []string{"tick"}})["id"].(string)
	var ids []string
	for i := range 5 {
		got, _, err := s.Stack.Webhooks.DispatchEvent(context.Background(), "tick", i)
		if err != nil || len(got) != 1 {
			t.Fatalf("dispatch: %v %v", got, err)
		}
		ids = append(ids, got[0])
		clock.Advance(10 * time.Second)
	}
	list := func(q string) []string {
		var out []string
		for _, d := range apitest.List(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, webhooksURL+"/"+hook+"/deliveries"+q, nil)["data"]) {
			out = append(out, apitest.Obj(t, d)["id"].(string))
		}
		return out
	}
	rev := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
	for q, want := range map[string][]string{
		"":                          rev,
		"?limit=2":                  rev[:2],
		"?since=1800000020":         rev[:3],
		"?since=1800000020&limit=1": rev[:1],
		"?since=1900000000":         nil,
	} {
		if got := list(q); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("deliveries%s = %v, want %v", q, got, want)
		}
	}
}
