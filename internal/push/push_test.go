package push_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"svcd/internal/push"
	"svcd/internal/push/pushtest"
)

// The protocols against local stand-ins that check each request the way
// the provider does (pushtest).

func results(outs []push.Outcome) []string {
	var s []string
	for _, o := range outs {
		s = append(s, o.Result.String())
	}
	return s
}

func same(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func noRefusals(t *testing.T, refused []string) {
	t.Helper()
	if len(refused) > 0 {
		t.Fatalf("the stand-in refused requests: %q", refused)
	}
}

func TestFCM(t *testing.T) {
	f := pushtest.NewFCM(t)
	c := push.New(push.Options{})
	cfg := map[string]string{"service_account": f.ServiceAccount, "endpoint": f.URL()}
	ctx := context.Background()
	if err := c.Probe(ctx, "fcm", cfg); err != nil {
		t.Fatalf("probe: %v", err)
	}
	f.Reply("dead", pushtest.Reply{Status: http.StatusNotFound, Code: "UNREGISTERED"})
	f.Reply("busy", pushtest.Reply{Status: http.StatusServiceUnavailable, Code: "UNAVAILABLE"})
	f.Reply("bad", pushtest.Reply{Status: http.StatusBadRequest, Code: "INVALID_ARGUMENT"})
	f.Reply("limited", pushtest.Reply{Status: http.StatusTooManyRequests, Code: "QUOTA_EXCEEDED"})
	msg := push.Message{Title: "Hi", Body: "there", Data: map[string]any{"n": 3, "ok": true, "s": "x", "nil": nil, "obj": map[string]any{"a": 1}},
		Key: "5f0c7c1e-7a51-4d43-8c1e-0d7c2b1c9f00"}
	outs := c.Push(ctx, "fcm", cfg, msg, []string{"good", "dead", "busy", "bad", "limited"})
	if want := []string{"sent", "dead", "retry", "drop", "retry"}; !same(results(outs), want) {
		t.Fatalf("outcomes %v, want %v (%+v)", results(outs), want, outs)
	}
	noRefusals(t, f.Refused())
	got := f.Received()
	if len(got) != 1 || got[0].Target != "good" || got[0].Title != "Hi" || got[0].Body != "there" || got[0].Key != msg.Key {
		t.Fatalf("received %+v", got)
	}
	want := map[string]string{"n": "3", "ok": "true", "s": "x", "nil": "", "obj": `{"a":1}`}
	for k, v := range want {
		if got[0].Data[k] != v {
			t.Errorf("data %s = %#v, want %q", k, got[0].Data[k], v)
		}
	}
	// The access token is kept: a second push asks for none (the probe
	// asked for its own).
	before := f.TokenRequests()
	c.Push(ctx, "fcm", cfg, msg, []string{"good"})
	if f.TokenRequests() != before {
		t.Fatalf("a second push minted another token (%d -> %d)", before, f.TokenRequests())
	}
	// A token endpoint that fails: 5xx transient, 4xx permanent.
	f.FailTokens(http.StatusServiceUnavailable)
	other := map[string]string{"service_account": f.ServiceAccount, "endpoint": f.URL(), "token_url": f.TokenURL() + "?again"}
	if o := c.Push(ctx, "fcm", other, msg, []string{"good"}); o[0].Result != push.Retry {
		t.Fatalf("token endpoint 503: %+v", o)
	}
	f.FailTokens(http.StatusBadRequest)
	other["token_url"] = f.TokenURL() + "?third"
	if o := c.Push(ctx, "fcm", other, msg, []string{"good"}); o[0].Result != push.Drop {
		t.Fatalf("token endpoint 400: %+v", o)
	}
	if err := c.Probe(ctx, "fcm", cfg); err == nil {
		t.Fatal("the probe passed while the token endpoint refuses")
	}
	// Nothing listens: a network failure is transient.
	f.FailTokens(0)
	down := map[string]string{"service_account": f.ServiceAccount, "endpoint": "http://127.0.0.1:1"}
	if o := c.Push(ctx, "fcm", down, msg, []string{"good"}); o[0].Result != push.Retry {
		t.Fatalf("no server: %+v", o)
	}
}

func TestAPNs(t *testing.T) {
	a := pushtest.NewAPNs(t)
	c := push.New(push.Options{RootCAs: a.Roots()})
	cfg := map[string]string{"team_id": a.TeamID, "key_id": a.KeyID, "private_key": a.KeyPEM, "topic": a.Topic, "host": a.URL()}
	ctx := context.Background()
	if err := c.Probe(ctx, "apns", cfg); err != nil {
		t.Fatalf("probe: %v", err)
	}
	a.Reply("gone", pushtest.Reply{Status: http.StatusGone, Code: "Unregistered"})
	a.Reply("busy", pushtest.Reply{Status: http.StatusServiceUnavailable, Code: "ServiceUnavailable"})
	a.Reply("bad", pushtest.Reply{Status: http.StatusBadRequest, Code: "BadDeviceToken"})
	msg := push.Message{Title: "Hi", Body: "there", Data: map[string]any{"chat": "c1", "aps": "ignored"}, Key: "k-1"}
	outs := c.Push(ctx, "apns", cfg, msg, []string{"aa11", "gone", "busy", "bad"})
	if want := []string{"sent", "dead", "retry", "drop"}; !same(results(outs), want) {
		t.Fatalf("outcomes %v, want %v (%+v)", results(outs), want, outs)
	}
	noRefusals(t, a.Refused())
	got := a.Received()
	if len(got) != 1 || got[0].Target != "aa11" || got[0].Title != "Hi" || got[0].Body != "there" || got[0].Key != "k-1" ||
		got[0].Data["chat"] != "c1" || got[0].Header.Get("apns-push-type") != "alert" {
		t.Fatalf("received %+v", got)
	}
	// A key the stand-in does not know is refused as the credentials.
	other := pushtest.NewAPNs(t)
	bad := map[string]string{"team_id": a.TeamID, "key_id": a.KeyID, "private_key": other.KeyPEM, "topic": a.Topic, "host": a.URL()}
	if err := c.Probe(ctx, "apns", bad); err == nil || !strings.Contains(err.Error(), "InvalidProviderToken") {
		t.Fatalf("probe with another key: %v", err)
	}
	if o := c.Push(ctx, "apns", bad, msg, []string{"aa11"}); o[0].Result != push.Drop {
		t.Fatalf("push with another key: %+v", o)
	}
}

func TestHostedPush(t *testing.T) {
	h := pushtest.NewHosted(t)
	c := push.New(push.Options{})
	cfg := map[string]string{"app_id": h.AppID, "api_key": h.APIKey, "endpoint": h.URL()}
	ctx := context.Background()
	if err := c.Probe(ctx, "hostedpush", cfg); err != nil {
		t.Fatalf("probe: %v", err)
	}
	h.Reply("u-limited", pushtest.Reply{Status: http.StatusTooManyRequests})
	h.Reply("u-bad", pushtest.Reply{Status: http.StatusBadRequest})
	msg := push.Message{Title: "Hi", Body: "there", Data: map[string]any{"n": 1}, Key: "5f0c7c1e-7a51-4d43-8c1e-0d7c2b1c9f00"}
	outs := c.Push(ctx, "hostedpush", cfg, msg, []string{"u1", "u-limited", "u-bad"})
	if want := []string{"sent", "retry", "drop"}; !same(results(outs), want) {
		t.Fatalf("outcomes %v, want %v (%+v)", results(outs), want, outs)
	}
	noRefusals(t, h.Refused())
	got := h.Received()
	if len(got) != 1 || got[0].Target != "u1" || got[0].Title != "Hi" || got[0].Key != msg.Key || got[0].Data["n"] != float64(1) {
		t.Fatalf("received %+v", got)
	}
	wrong := map[string]string{"app_id": h.AppID, "api_key": "Basic " + h.APIKey, "endpoint": h.URL()}
	if err := c.Probe(ctx, "hostedpush", wrong); err == nil {
		t.Fatal("the probe passed with a wrong key")
	}
	if o := c.Push(ctx, "hostedpush", wrong, msg, []string{"u1"}); o[0].Result != push.Drop {
		t.Fatalf("a wrong key: %+v", o)
	}
}
