package push

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sideshow/apns2"
	"github.com/sideshow/apns2/token"
)

// apnsWorkers bounds the requests of one push in flight at once (HTTP/2
// streams on one connection).
const apnsWorkers = 8

// apnsProbeToken is a device token no device has (APNs answers
// BadDeviceToken for it once the credentials are accepted).
const apnsProbeToken = "0000000000000000000000000000000000000000000000000000000000000000"

// apns sends through Apple's push service with token-based
// authentication: a JWT (ES256, the team's .p8 key; iss the team id, kid
// the key id) that apns2 mints and renews, over an HTTP/2 connection to
// <host>/3/device/<token>, dialled through the egress guard.
type apns struct {
	c  *Client
	mu sync.Mutex
	// key fingerprints the settings client was built from.
	key    string
	client *apns2.Client
}

// clientFor is the cached apns2 client for cfg, built anew when the
// settings changed (a client keeps its JWT: APNs refuses tokens renewed
// more often than every 20 minutes).
func (a *apns) clientFor(cfg map[string]string) (*apns2.Client, error) {
	host := strings.TrimRight(cfg["host"], "/")
	if host == "" {
		host = apns2.HostProduction
	}
	key := fingerprint(cfg["team_id"], cfg["key_id"], cfg["private_key"], host)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil && a.key == key {
		return a.client, nil
	}
	authKey, err := token.AuthKeyFromBytes([]byte(cfg["private_key"]))
	if err != nil {
		return nil, fmt.Errorf("the .p8 key: %w", err)
	}
	cl := apns2.NewTokenClient(&token.Token{AuthKey: authKey, KeyID: cfg["key_id"], TeamID: cfg["team_id"]})
	cl.Host = host
	// HTTP/2 over TLS (APNs speaks nothing else), dialled through the
	// guard; the transport does the TLS with the configured roots.
	cl.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext:         a.c.opts.Dial,
		TLSClientConfig:     &tls.Config{RootCAs: a.c.opts.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		HTTP2:               &http.HTTP2Config{SendPingTimeout: 15 * time.Second},
		TLSHandshakeTimeout: 10 * time.Second,
		Proxy:               nil, // a proxy would dial for us, unchecked
	}}
	if a.client != nil {
		a.client.CloseIdleConnections()
	}
	a.key, a.client = key, cl
	return cl, nil
}

// forget drops the cached client (its token was refused as expired).
func (a *apns) forget() {
	a.mu.Lock()
	a.client = nil
	a.mu.Unlock()
}

func (a *apns) push(ctx context.Context, cfg map[string]string, msg Message, targets []string) []Outcome {
	cl, err := a.clientFor(cfg)
	if err != nil {
		return all(len(targets), Outcome{Result: Drop, Detail: err.Error()})
	}
	payload, err := json.Marshal(apnsPayload(msg))
	if err != nil {
		return all(len(targets), Outcome{Result: Drop, Detail: err.Error()})
	}
	return each(ctx, targets, apnsWorkers, func(ctx context.Context, target string) Outcome {
		n := &apns2.Notification{DeviceToken: target, Topic: cfg["topic"], Payload: payload,
			PushType: apns2.PushTypeAlert, Priority: apns2.PriorityHigh}
		if msg.Key != "" && len(msg.Key) <= 64 {
			n.CollapseID = msg.Key
		}
		res, err := cl.PushWithContext(ctx, n)
		if err != nil {
			return netFailure(err)
		}
		return a.outcome(res)
	})
}

// apnsPayload is the notification's JSON: aps.alert with the title and
// body, and the data's members beside aps.
func apnsPayload(msg Message) map[string]any {
	p := map[string]any{}
	for k, v := range msg.Data {
		if k != "aps" {
			p[k] = v
		}
	}
	alert := map[string]string{}
	if msg.Title != "" {
		alert["title"] = msg.Title
	}
	if msg.Body != "" {
		alert["body"] = msg.Body
	}
	p["aps"] = map[string]any{"alert": alert, "sound": "default"}
	return p
}

// outcome classifies APNs' answer: 410 (Unregistered, ExpiredToken) is a
// dead token; 429 and 5xx are transient, and so is an expired provider
// token (a new client mints another); other 4xx are permanent.
func (a *apns) outcome(res *apns2.Response) Outcome {
	if res.Sent() {
		return Outcome{Result: Sent}
	}
	detail := fmt.Sprintf("%d %s", res.StatusCode, res.Reason)
	switch {
	case res.StatusCode == http.StatusGone || res.Reason == apns2.ReasonUnregistered || res.Reason == apns2.ReasonExpiredToken:
		return Outcome{Result: Dead, Detail: detail}
	case res.Reason == apns2.ReasonExpiredProviderToken:
		a.forget()
		return Outcome{Result: Retry, Detail: detail}
	}
	return byStatus(res.StatusCode, detail)
}

// probe pushes to a token no device has: APNs judges the credentials
// before the token, so BadDeviceToken (400) means they were accepted.
func (a *apns) probe(ctx context.Context, cfg map[string]string) error {
	cl, err := a.clientFor(cfg)
	if err != nil {
		return err
	}
	res, err := cl.PushWithContext(ctx, &apns2.Notification{DeviceToken: apnsProbeToken, Topic: cfg["topic"],
		Payload: []byte(`{"aps":{"content-available":1}}`), PushType: apns2.PushTypeBackground, Priority: apns2.PriorityLow})
	if err != nil {
		return err
	}
	switch {
	case res.StatusCode == http.StatusBadRequest && res.Reason == apns2.ReasonBadDeviceToken, res.Sent():
		return nil
	case res.StatusCode == http.StatusForbidden:
		return fmt.Errorf("APNs refused the credentials: %d %s", res.StatusCode, res.Reason)
	}
	return fmt.Errorf("APNs answered %d %s", res.StatusCode, res.Reason)
}
