package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// fcmScope is the OAuth2 scope of FCM's HTTP v1 API.
const fcmScope = "https://www.googleapis.com/auth/firebase.messaging"

// fcmWorkers bounds the requests of one push in flight at once.
const fcmWorkers = 8

// fcm sends through Firebase Cloud Messaging's HTTP v1 API: one POST
// <endpoint>/v1/projects/<project>/messages:send per device token, with a
// bearer access token minted from the service account (the two-legged
// JWT flow against its token_uri, or the token_url setting).
type fcm struct {
	c  *Client
	mu sync.Mutex
	// key fingerprints the settings ts was built from.
	key string
	ts  oauth2.TokenSource
}

// fcmConfig is what a send needs of the settings.
type fcmConfig struct {
	project  string
	endpoint string
	jwt      func() (oauth2.TokenSource, error)
}

// config reads cfg: the project (the setting, else the service
// account's), the endpoint, and a token source.
func (f *fcm) config(cfg map[string]string) (*fcmConfig, error) {
	sa := []byte(cfg["service_account"])
	var acct struct {
		ProjectID string `json:"project_id"`
	}
	if err := json.Unmarshal(sa, &acct); err != nil {
		return nil, fmt.Errorf("the service account is not valid JSON: %w", err)
	}
	project := strings.TrimSpace(cfg["project_id"])
	if project == "" {
		project = acct.ProjectID
	}
	if project == "" {
		return nil, errors.New("no project id: set project_id")
	}
	endpoint := strings.TrimRight(cfg["endpoint"], "/")
	if endpoint == "" {
		endpoint = "https://fcm.googleapis.com"
	}
	newSource := func() (oauth2.TokenSource, error) {
		jc, err := google.JWTConfigFromJSON(sa, fcmScope)
		if err != nil {
			return nil, err
		}
		if u := strings.TrimSpace(cfg["token_url"]); u != "" {
			jc.TokenURL = u
		}
		// The token requests go through the guarded client; the context
		// outlives this call (the source refreshes later).
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, f.c.opts.HTTP)
		return jc.TokenSource(ctx), nil
	}
	return &fcmConfig{project: project, endpoint: endpoint, jwt: newSource}, nil
}

// source is the cached token source for cfg, built anew when the
// settings changed.
func (f *fcm) source(cfg map[string]string, fc *fcmConfig) (oauth2.TokenSource, error) {
	key := fingerprint(cfg["service_account"], cfg["token_url"])
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ts != nil && f.key == key {
		return f.ts, nil
	}
	ts, err := fc.jwt()
	if err != nil {
		return nil, err
	}
	f.key, f.ts = key, oauth2.ReuseTokenSource(nil, ts)
	return f.ts, nil
}

// forget drops the cached token source (the provider refused its token).
func (f *fcm) forget() {
	f.mu.Lock()
	f.ts = nil
	f.mu.Unlock()
}

// tokenFailure classifies a failure to mint an access token: the token
// endpoint's 4xx is permanent (the account is refused), the rest
// transient.
func tokenFailure(err error) Outcome {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return byStatus(re.Response.StatusCode, "access token: "+clip([]byte(err.Error())))
	}
	return Outcome{Result: Retry, Detail: "access token: " + err.Error()}
}

func (f *fcm) push(ctx context.Context, cfg map[string]string, msg Message, targets []string) []Outcome {
	fc, err := f.config(cfg)
	if err != nil {
		return all(len(targets), Outcome{Result: Drop, Detail: err.Error()})
	}
	ts, err := f.source(cfg, fc)
	if err != nil {
		return all(len(targets), Outcome{Result: Drop, Detail: err.Error()})
	}
	tok, err := ts.Token()
	if err != nil {
		return all(len(targets), tokenFailure(err))
	}
	u := fc.endpoint + "/v1/projects/" + url.PathEscape(fc.project) + "/messages:send"
	data := stringData(msg.Data)
	return each(ctx, targets, fcmWorkers, func(ctx context.Context, target string) Outcome {
		o := f.send(ctx, u, tok.AccessToken, fcmMessage(target, msg, data))
		if o.Result == Retry && strings.HasPrefix(o.Detail, "401") {
			f.forget() // a new token next time
		}
		return o
	})
}

// fcmMessage is the send request's body for one token: the notification,
// the data as strings, and the message's key as the Android
// notification's tag and the APNs collapse id, so a message sent again
// replaces the one shown.
func fcmMessage(token string, msg Message, data map[string]string) map[string]any {
	m := map[string]any{"token": token}
	n := map[string]string{}
	if msg.Title != "" {
		n["title"] = msg.Title
	}
	if msg.Body != "" {
		n["body"] = msg.Body
	}
	if len(n) > 0 {
		m["notification"] = n
	}
	if len(data) > 0 {
		m["data"] = data
	}
	if msg.Key != "" && len(msg.Key) <= 64 {
		if len(n) > 0 {
			m["android"] = map[string]any{"notification": map[string]string{"tag": msg.Key}}
		}
		m["apns"] = map[string]any{"headers": map[string]string{"apns-collapse-id": msg.Key}}
	}
	return map[string]any{"message": m}
}

// stringData coerces data's values to strings, as FCM requires: strings
// as they are, null as "", anything else as its JSON text.
func stringData(data map[string]any) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		switch x := v.(type) {
		case string:
			out[k] = x
		case nil:
			out[k] = ""
		default:
			b, err := json.Marshal(x)
			if err != nil {
				b = []byte(fmt.Sprint(x))
			}
			out[k] = string(b)
		}
	}
	return out
}

// fcmError is FCM's error answer.
type fcmError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type      string `json:"@type"`
			ErrorCode string `json:"errorCode"`
		} `json:"details"`
	} `json:"error"`
}

// send posts one message.
func (f *fcm) send(ctx context.Context, u, accessToken string, body map[string]any) Outcome {
	b, err := json.Marshal(body)
	if err != nil {
		return Outcome{Result: Drop, Detail: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return Outcome{Result: Drop, Detail: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	res, err := f.c.opts.HTTP.Do(req)
	if err != nil {
		return netFailure(err)
	}
	defer res.Body.Close()
	answer := readAnswer(res.Body)
	if res.StatusCode/100 == 2 {
		return Outcome{Result: Sent}
	}
	var fe fcmError
	_ = json.Unmarshal(answer, &fe)
	code := fe.Error.Status
	for _, d := range fe.Error.Details {
		if d.ErrorCode != "" {
			code = d.ErrorCode
		}
	}
	detail := fmt.Sprintf("%d %s: %s", res.StatusCode, code, fe.Error.Message)
	if fe.Error.Message == "" {
		detail = fmt.Sprintf("%d: %s", res.StatusCode, clip(answer))
	}
	switch {
	case res.StatusCode == http.StatusNotFound || code == "UNREGISTERED":
		return Outcome{Result: Dead, Detail: detail}
	case res.StatusCode == http.StatusUnauthorized:
		// The access token was refused (revoked, or expired early): mint
		// another and retry.
		return Outcome{Result: Retry, Detail: detail}
	}
	return byStatus(res.StatusCode, detail)
}

// probe mints an access token with a fresh source (not the cached one),
// so the token endpoint is asked.
func (f *fcm) probe(ctx context.Context, cfg map[string]string) error {
	fc, err := f.config(cfg)
	if err != nil {
		return err
	}
	ts, err := fc.jwt()
	if err != nil {
		return err
	}
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("the token endpoint refused the service account: %w", err)
	}
	return nil
}
