package push

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// hosted sends through the hosted push provider's REST API (OneSignal's):
// POST <endpoint>/notifications with "Authorization: Basic <REST_KEY>",
// the raw key (SPEC.md), targeting the user by their external user id.
// The provider keeps the devices; one request covers all of a user's.
type hosted struct{ c *Client }

func (h *hosted) push(ctx context.Context, cfg map[string]string, msg Message, targets []string) []Outcome {
	return each(ctx, targets, 4, func(ctx context.Context, user string) Outcome {
		return h.send(ctx, cfg, msg, user)
	})
}

// hostedBody is the send's body for user.
func hostedBody(appID string, msg Message, user string) map[string]any {
	contents := msg.Body
	if contents == "" {
		contents = msg.Title // the provider requires contents
	}
	b := map[string]any{
		"app_id":                        appID,
		"include_external_user_ids":     []string{user},
		"channel_for_external_user_ids": "push",
		"contents":                      map[string]string{"en": contents},
	}
	if msg.Title != "" {
		b["headings"] = map[string]string{"en": msg.Title}
	}
	if len(msg.Data) > 0 {
		b["data"] = msg.Data
	}
	// The idempotency key must be a UUID: a job id is one.
	if _, err := uuid.Parse(msg.Key); err == nil {
		b["external_id"] = msg.Key
	}
	return b
}

func (h *hosted) send(ctx context.Context, cfg map[string]string, msg Message, user string) Outcome {
	body, err := json.Marshal(hostedBody(cfg["app_id"], msg, user))
	if err != nil {
		return Outcome{Result: Drop, Detail: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hostedURL(cfg, "/notifications"), bytes.NewReader(body))
	if err != nil {
		return Outcome{Result: Drop, Detail: err.Error()}
	}
	req.Header.Set("Authorization", "Basic "+cfg["api_key"])
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	res, err := h.c.opts.HTTP.Do(req)
	if err != nil {
		return netFailure(err)
	}
	defer res.Body.Close()
	answer := readAnswer(res.Body)
	if res.StatusCode/100 == 2 {
		return Outcome{Result: Sent}
	}
	return byStatus(res.StatusCode, fmt.Sprintf("%d: %s", res.StatusCode, clip(answer)))
}

// hostedURL is the endpoint setting joined with path.
func hostedURL(cfg map[string]string, path string) string {
	base := strings.TrimRight(cfg["endpoint"], "/")
	if base == "" {
		base = "https://onesignal.com/api/v1"
	}
	return base + path
}

// probe reads one notification of the app: the key and the app id are
// accepted when that succeeds.
func (h *hosted) probe(ctx context.Context, cfg map[string]string) error {
	u := hostedURL(cfg, "/notifications") + "?app_id=" + url.QueryEscape(cfg["app_id"]) + "&limit=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Basic "+cfg["api_key"])
	res, err := h.c.opts.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer := readAnswer(res.Body)
	switch {
	case res.StatusCode/100 == 2:
		return nil
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return fmt.Errorf("the provider refused the REST API key: %d: %s", res.StatusCode, clip(answer))
	}
	return fmt.Errorf("the provider answered %d: %s", res.StatusCode, clip(answer))
}
