package api_test

import (
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
	"svcd/engine/notify"
)

// The device routes: validation, the upsert on the unique token
// (rebinding it to the caller and enabling it again), the soft delete
// scoped to the token and the caller, who may call them.
func TestNotificationDevices(t *testing.T) {
	e := newPushEnv(t)
	e.enable(t, notify.FCM)
	s := e.s
	aliceID, alice := e.user(t, "alice@example.com")
	bobID, bob := e.user(t, "bob@example.com")
	token := "fcm:APA91b-alice_1" // FCM tokens hold ':' and '-'

	dev := func(body map[string]any) map[string]any {
		m := map[string]any{"token": "tk", "provider": "fcm", "platform": "ios"}
		for k, v := range body {
			m[k] = v
		}
		return m
	}
	bad := func(name string, body map[string]any, detail, fragment string) apitest.Scenario {
		return apitest.Scenario{Name: name, Method: http.MethodPost, URL: devicesURL, Headers: bearer(alice), Body: body,
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{fragment}, AfterFunc: apitest.Details(detail)}
	}
	apitest.Run(t, s, []apitest.Scenario{
		bad("hosted provider refused", dev(map[string]any{"provider": "hostedpush"}), "provider", "hostedpush keeps its devices itself"),
		bad("unknown provider", dev(map[string]any{"provider": "gcm"}), "provider", "must be fcm or apns"),
		bad("missing provider", map[string]any{"token": "t", "platform": "ios"}, "provider", "is required"),
		bad("missing token", map[string]any{"provider": "fcm", "platform": "ios"}, "token", "is required"),
		bad("token too long", dev(map[string]any{"token": strings.Repeat("x", 4097)}), "token", "at most 4096"),
		bad("token with a slash", dev(map[string]any{"token": "a/b"}), "token", "slashes"),
		bad("token not a string", dev(map[string]any{"token": 12}), "token", "must be a string"),
		bad("bad platform", dev(map[string]any{"platform": "windows"}), "platform", "ios, android or web"),
		bad("missing platform", map[string]any{"token": "t", "provider": "apns"}, "platform", "is required"),
		bad("app version too long", dev(map[string]any{"app_version": strings.Repeat("1", 101)}), "app_version", "at most 100"),
		bad("unknown member", dev(map[string]any{"user": bobID}), "user", "unknown member"),
		{Name: "not JSON", Method: http.MethodPost, URL: devicesURL, Headers: bearer(alice), Body: "nope", ExpectedStatus: http.StatusBadRequest},
		{Name: "anonymous", Method: http.MethodPost, URL: devicesURL, Body: dev(nil), ExpectedStatus: http.StatusUnauthorized},
		{Name: "an admin is not a user", Method: http.MethodPost, URL: devicesURL, Admin: true, Body: dev(nil), ExpectedStatus: http.StatusForbidden},
	})

	// The longest token is accepted.
	if st, d := e.register(t, alice, dev(map[string]any{"token": strings.Repeat("y", 4096)})); st != http.StatusCreated {
		t.Fatalf("a 4096-character token: %d %v", st, d)
	}
	// Created: 201 and the record as the caller sees it.
	st, d := e.register(t, alice, map[string]any{"token": token, "provider": "fcm", "platform": "android", "app_version": "1.2.0"})
	if st != http.StatusCreated || d["user"] != aliceID || d["token"] != token || d["enabled"] != true || d["app_version"] != "1.2.0" ||
		d["collectionName"] != notify.DevicesCollection || d["last_seen"] == nil {
		t.Fatalf("register: %d %v", st, d)
	}
	id := d["id"].(string)
	// The same token again: 200, the same record.
	st, d = e.register(t, alice, map[string]any{"token": token, "provider": "fcm", "platform": "android", "app_version": "1.3.0"})
	if st != http.StatusOK || d["id"] != id || d["app_version"] != "1.3.0" {
		t.Fatalf("register again: %d %v", st, d)
	}
	// Another user registers the same token (a shared or resold device):
	// it is rebound to them.
	st, d = e.register(t, bob, map[string]any{"token": token, "provider": "apns", "platform": "ios"})
	if st != http.StatusOK || d["id"] != id || d["user"] != bobID || d["provider"] != "apns" || d["app_version"] != "" {
		t.Fatalf("rebind: %d %v", st, d)
	}
	// Alice no longer holds it: her delete is a 404 and changes nothing.
	if got := e.unregister(t, alice, token); got != http.StatusNotFound {
		t.Fatalf("alice's delete of bob's token: %d", got)
	}
	if r := e.deviceRecord(t, id); r["enabled"] != true {
		t.Fatalf("alice's delete disabled bob's device: %v", r)
	}
	// Bob's delete is a soft delete; again, it still succeeds.
	for range 2 {
		if got := e.unregister(t, bob, token); got != http.StatusNoContent {
			t.Fatalf("bob's delete: %d", got)
		}
	}
	if r := e.deviceRecord(t, id); r["enabled"] != false || r["user"] != bobID {
		t.Fatalf("after the soft delete: %v", r)
	}
	// Registering enables it again.
	if st, d = e.register(t, alice, map[string]any{"token": token, "provider": "fcm", "platform": "android"}); st != http.StatusOK || d["enabled"] != true || d["user"] != aliceID {
		t.Fatalf("register after delete: %d %v", st, d)
	}
	if got := e.unregister(t, alice, "never-registered"); got != http.StatusNotFound {
		t.Fatalf("delete of an unknown token: %d", got)
	}
	// Users read their own devices through the records API, and cannot
	// write them there.
	var ids []string
	for _, r := range apitest.List(t, apitest.DecodeMap(t, must(t, s, http.MethodGet, "/api/v1/"+notify.DevicesCollection, bearer(bob)))["data"]) {
		ids = append(ids, apitest.Obj(t, r)["id"].(string))
	}
	if len(ids) != 0 {
		t.Fatalf("bob lists %v", ids)
	}
	list := apitest.DecodeMap(t, must(t, s, http.MethodGet, "/api/v1/"+notify.DevicesCollection, bearer(alice)))
	if apitest.Int(t, list["totalItems"]) != 2 {
		t.Fatalf("alice lists %v", list)
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "no create through the records API", Method: http.MethodPost, URL: "/api/v1/" + notify.DevicesCollection, Headers: bearer(alice),
			Body: dev(map[string]any{"user": aliceID}), ExpectedStatus: http.StatusForbidden},
		{Name: "no update through the records API", Method: http.MethodPatch, URL: "/api/v1/" + notify.DevicesCollection + "/" + id, Headers: bearer(alice),
			Body: map[string]any{"user": bobID}, ExpectedStatus: http.StatusForbidden},
	})
	// The device commands go through the record funnel: history and
	// realtime see them like any record change (the history of the
	// record is enabled by the admin here).
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/collections/"+notify.DevicesCollection, map[string]any{"history_enabled": true})
	e.unregister(t, alice, token)
	hist := jsonText(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/"+notify.DevicesCollection+"/"+id+"/history", nil))
	if !strings.Contains(hist, `"op":"update"`) || !strings.Contains(hist, `"actor_id":"`+aliceID+`"`) {
		t.Fatalf("history of the device: %s", hist)
	}
	// Deleting a user deletes their devices (the relation cascades).
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/users/"+aliceID, nil)
	res, _ := s.AdminDo(t, http.MethodGet, "/api/v1/"+notify.DevicesCollection+"/"+id, nil)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("alice's device after her deletion: %d", res.StatusCode)
	}
}

// A user of another auth collection cannot register a device of the
// notification collections' users.
func TestNotificationDevicesOtherUsers(t *testing.T) {
	e := newPushEnv(t)
	e.enable(t, notify.FCM)
	e.s.CreateCollection(t, coll("staff", "auth", []map[string]any{f("name", "text")}, "create_rule", ""))
	register(t, e.s, "staff", "st@example.com", userPassword)
	tok := signIn(t, e.s, "staff", "st@example.com", userPassword)["token"].(string)
	apitest.Run(t, e.s, []apitest.Scenario{
		{Name: "staff user", Method: http.MethodPost, URL: devicesURL, Headers: bearer(tok),
			Body: map[string]any{"token": "t", "provider": "fcm", "platform": "web"}, ExpectedStatus: http.StatusForbidden,
			ExpectedContent: []string{"users of the users collection"}},
	})
}
