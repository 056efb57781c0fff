package webhooks

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"

	"svcd/engine"
)

// Webhook is a webhook as the API shows it (SPEC.md "Webhook").
type Webhook struct {
	ID            string            `json:"id"`
	URL           string            `json:"url"`
	Events        []string          `json:"events"`
	Secret        string            `json:"secret"`
	CustomHeaders map[string]string `json:"custom_headers"`
	Enabled       bool              `json:"enabled"`
	RetryMax      int64             `json:"retry_max"`
	RetryBackoff  string            `json:"retry_backoff"`
	RetryDelayMs  int64             `json:"retry_delay_ms"`
	TimeoutMs     int64             `json:"timeout_ms"`
	Created       int64             `json:"created"`
	Updated       int64             `json:"updated"`
}

// Defaults and bounds of SPEC.md's webhook fields.
const (
	defaultRetryMax   = 3
	maxRetryMax       = 25
	defaultRetryDelay = 1000
	maxRetryDelay     = 24 * 3600 * 1000
	defaultTimeout    = 30000
	minTimeout        = 1000 // SPEC.md: floored at 1000
	maxTimeout        = 300000
	maxURL            = 2048
	maxSecret         = 1024
	backoffExp        = "exponential"
	backoffFixed      = "fixed"
)

// SecretMask stands for a secret in answers that do not reveal it; sent
// back unchanged in a PATCH it leaves the secret alone.
const SecretMask = engine.SecretMask

// idPrefix starts webhook ids (CONTRACT.md's scheme: a prefix and 15
// characters).
const idPrefix = "whk_"

// newWebhook is a webhook with SPEC.md's defaults and a random secret.
func newWebhook() (*Webhook, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	return &Webhook{
		ID: idPrefix + engine.NewID(), Events: []string{}, Secret: secret, CustomHeaders: map[string]string{},
		Enabled: true, RetryMax: defaultRetryMax, RetryBackoff: backoffExp, RetryDelayMs: defaultRetryDelay,
		TimeoutMs: defaultTimeout,
	}, nil
}

// newSecret is SPEC.md's generated secret: 32 random bytes in hex.
func newSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", engine.Errorf(engine.KindInternal, "could not generate a secret")
	}
	return hex.EncodeToString(b[:]), nil
}

// apply overlays the members of body on w, validating each: the fields
// of SPEC.md's table (others are ignored). A secret sent as the mask is
// left alone; null or "" as a secret draws a new random one.
func (w *Webhook) apply(body []byte) error {
	var in map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil || in == nil {
		return engine.Errorf(engine.KindBadRequest, "Expected a JSON object")
	}
	if dec.More() {
		return engine.Errorf(engine.KindBadRequest, "Invalid JSON body: trailing data")
	}
	d := map[string]string{}
	for k, raw := range in {
		if msg := w.set(k, raw); msg != "" {
			d[k] = msg
		}
	}
	if w.URL == "" && d["url"] == "" {
		d["url"] = "required"
	}
	if len(d) > 0 {
		return engine.ValidationError(d)
	}
	return nil
}

// set validates and sets member k; the answer is the problem ("" if none).
func (w *Webhook) set(k string, raw json.RawMessage) string {
	null := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	switch k {
	case "url":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "must be a string"
		}
		if msg := checkURL(s); msg != "" {
			return msg
		}
		w.URL = strings.TrimSpace(s)
	case "events":
		var list []string
		if null {
			list = []string{}
		} else if json.Unmarshal(raw, &list) != nil {
			return "must be an array of event patterns"
		}
		pats, msg := normalizePatterns(list)
		if msg != "" {
			return msg
		}
		w.Events = pats
	case "secret":
		var s string
		if !null && json.Unmarshal(raw, &s) != nil {
			return "must be a string"
		}
		switch {
		case s == SecretMask:
		case s == "":
			secret, err := newSecret()
			if err != nil {
				return "could not be generated"
			}
			w.Secret = secret
		case len(s) > maxSecret:
			return "must be at most 1024 characters"
		default:
			w.Secret = s
		}
	case "custom_headers":
		var h map[string]any
		if null {
			h = map[string]any{}
		} else if json.Unmarshal(raw, &h) != nil {
			return "must be an object of header names to string values"
		}
		out, msg := cleanHeaders(h)
		if msg != "" {
			return msg
		}
		w.CustomHeaders = out
	case "enabled":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return "must be a boolean"
		}
		w.Enabled = b
	case "retry_max":
		n, ok := intIn(raw, 1, maxRetryMax)
		if !ok {
			return "must be an integer from 1 to 25 (total attempts)"
		}
		w.RetryMax = n
	case "retry_backoff":
		var s string
		if json.Unmarshal(raw, &s) != nil || (s != backoffExp && s != backoffFixed) {
			return "must be exponential or fixed"
		}
		w.RetryBackoff = s
	case "retry_delay_ms":
		n, ok := intIn(raw, 0, maxRetryDelay)
		if !ok {
			return "must be an integer from 0 to 86400000"
		}
		w.RetryDelayMs = n
	case "timeout_ms":
		n, ok := intIn(raw, 0, maxTimeout)
		if !ok {
			return "must be an integer up to 300000"
		}
		w.TimeoutMs = max(n, minTimeout)
	}
	return ""
}

// intIn reads an integer JSON number within [lo, hi].
func intIn(raw json.RawMessage, lo, hi int64) (int64, bool) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	v, err := n.Int64()
	if err != nil || v < lo || v > hi {
		return 0, false
	}
	return v, true
}

// checkURL: SPEC.md's "must be http or https", with a host.
func checkURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "required"
	}
	if len(s) > maxURL {
		return "must be at most 2048 characters"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "must be an http or https URL"
	}
	return ""
}

// masked is w with its secret replaced by the mask.
func (w *Webhook) masked() *Webhook {
	c := *w
	c.Secret = SecretMask
	return &c
}
