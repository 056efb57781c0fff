package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"svcd/api/apitest"
	"svcd/engine/notify"
	"svcd/internal/push/pushtest"
)

// Notifications over HTTP on a real node, with the push providers played
// by local stand-ins that check each request as the provider would
// (internal/push/pushtest).

const (
	providersURL = "/api/v1/admin/notifications/providers"
	devicesURL   = "/api/v1/notifications/devices"
)

// pushEnv is a node with a users collection, loopback allowed by the
// egress guard, and the three providers' stand-ins (not enabled yet).
type pushEnv struct {
	s      *apitest.Server
	fcm    *pushtest.FCM
	apns   *pushtest.APNs
	hosted *pushtest.Hosted
}

func newPushEnv(t *testing.T) *pushEnv {
	t.Helper()
	a := pushtest.NewAPNs(t)
	s := apitest.Start(t, apitest.Options{PushRoots: a.Roots()})
	s.CreateCollection(t, usersCollection())
	// The stand-ins listen on loopback, which the guard denies by default.
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{
		"hooks.http.allow": "127.0.0.1", "notifications.push.retry_delay_ms": 50})
	return &pushEnv{s: s, fcm: pushtest.NewFCM(t), apns: a, hosted: pushtest.NewHosted(t)}
}

// enable enables a provider pointed at its stand-in.
func (e *pushEnv) enable(t *testing.T, provider string) {
	t.Helper()
	var body map[string]any
	switch provider {
	case notify.FCM:
		body = map[string]any{"enabled": true, "service_account": e.fcm.ServiceAccount, "endpoint": e.fcm.URL()}
	case notify.APNs:
		body = map[string]any{"enabled": true, "team_id": e.apns.TeamID, "key_id": e.apns.KeyID, "private_key": e.apns.KeyPEM,
			"topic": e.apns.Topic, "host": e.apns.URL()}
	case notify.HostedPush:
		body = map[string]any{"enabled": true, "app_id": e.hosted.AppID, "api_key": e.hosted.APIKey, "endpoint": e.hosted.URL()}
	}
	st := apitest.Obj(t, e.s.MustAdmin(t, http.StatusOK, http.MethodPatch, providersURL+"/"+provider, body)["data"])
	if st["enabled"] != true || st["configured"] != true {
		t.Fatalf("enable %s: %v", provider, st)
	}
}

// user signs up email and answers its id and token.
func (e *pushEnv) user(t *testing.T, email string) (id, tok string) {
	t.Helper()
	return credUser(t, e.s, email)
}

// register registers a device for tok and answers the status and record.
func (e *pushEnv) register(t *testing.T, tok string, dev map[string]any) (int, map[string]any) {
	t.Helper()
	res, body := e.s.Do(t, http.MethodPost, devicesURL, dev, bearer(tok))
	apitest.CheckCommon(t, res, body)
	m := apitest.DecodeMap(t, body)
	if d, ok := m["data"].(map[string]any); ok {
		return res.StatusCode, d
	}
	return res.StatusCode, m
}

// device registers a device and fails unless it was created.
func (e *pushEnv) device(t *testing.T, tok, provider, token string) map[string]any {
	t.Helper()
	status, d := e.register(t, tok, map[string]any{"token": token, "provider": provider, "platform": "android"})
	if status != http.StatusCreated {
		t.Fatalf("register %s: %d %v", token, status, d)
	}
	return d
}

// deviceRecord reads a device record as the admin.
func (e *pushEnv) deviceRecord(t *testing.T, id string) map[string]any {
	t.Helper()
	return apitest.Obj(t, e.s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/"+notify.DevicesCollection+"/"+id, nil)["data"])
}

// notify calls the module's Notify, the Go face of helpers.notify.
func (e *pushEnv) notify(t *testing.T, user string, msg notify.Message, opts notify.SendOptions) *notify.Result {
	t.Helper()
	res, err := e.s.Stack.Notify.Notify(context.Background(), user, msg, opts)
	if err != nil {
		t.Fatalf("notify %s: %v", user, err)
	}
	return res
}

// unregister disables a device as tok and answers the status.
func (e *pushEnv) unregister(t *testing.T, tok, token string) int {
	t.Helper()
	res, body := e.s.Do(t, http.MethodDelete, devicesURL+"/"+url.PathEscape(token), nil, bearer(tok))
	apitest.CheckCommon(t, res, body)
	return res.StatusCode
}

func boolp(b bool) *bool { return &b }
