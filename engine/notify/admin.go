package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"

	"svcd/engine"
)

// ProviderStatus is a provider as the admin routes show it: whether it is
// enabled, whether its settings would let it be (configured), and its
// settings by member name, secrets masked unless revealed.
type ProviderStatus struct {
	Name       string            `json:"name"`
	Enabled    bool              `json:"enabled"`
	Configured bool              `json:"configured"`
	Settings   map[string]string `json:"settings"`
	// Problems are what keeps a provider that is not configured from
	// being enabled, by member.
	Problems map[string]string `json:"problems,omitempty"`
}

// Overview is GET /admin/notifications/providers: whether the
// notification collections exist, and every provider.
type Overview struct {
	Bootstrapped bool             `json:"bootstrapped"`
	Providers    []ProviderStatus `json:"providers"`
}

// Providers lists the providers, secrets masked unless reveal.
func (n *Notifications) Providers(ctx context.Context, reveal bool) (*Overview, error) {
	out := &Overview{Bootstrapped: n.Bootstrapped(), Providers: []ProviderStatus{}}
	for _, p := range providers() {
		out.Providers = append(out.Providers, n.status(p, reveal))
	}
	return out, nil
}

// status is p's status, secrets masked unless reveal.
func (n *Notifications) status(p provider, reveal bool) ProviderStatus {
	cfg := n.config(p)
	problems := p.check(cfg)
	st := ProviderStatus{Name: p.name(), Enabled: truthy(cfg[memberEnabled]), Configured: len(problems) == 0,
		Settings: map[string]string{}}
	if len(problems) > 0 {
		st.Problems = problems
	}
	for _, m := range p.members() {
		v := cfg[m.key]
		if !reveal && v != "" && n.core.IsSecretSetting(settingKey(p.name(), m.key)) {
			v = engine.SecretMask
		}
		st.Settings[m.key] = v
	}
	return st
}

// PatchProvider changes provider name's settings from body: {enabled?,
// <member>?...}, a member null going back to its default. Enabling a
// provider checks the settings it needs (the cloud-messaging provider's
// service account must be valid JSON) and creates the notification
// collections first, through the log.
func (n *Notifications) PatchProvider(ctx context.Context, name string, body []byte) (*ProviderStatus, uint64, error) {
	p := providerNamed(name)
	if p == nil {
		return nil, 0, errUnknownProvider
	}
	patch, err := n.parsePatch(p, body)
	if err != nil {
		return nil, 0, err
	}
	cfg := n.config(p)
	for k, v := range patch {
		if v == nil {
			cfg[k] = n.defaultOf(p, k)
		} else {
			cfg[k] = *v
		}
	}
	var last uint64
	if truthy(cfg[memberEnabled]) {
		if bad := p.check(cfg); len(bad) > 0 {
			return nil, 0, engine.ValidationError(bad)
		}
		idx, err := n.ensure(ctx, InboxCollection, DevicesCollection)
		last = idx
		if err != nil {
			return nil, last, err
		}
	}
	set := map[string]any{}
	for k, v := range patch {
		if v == nil {
			set[settingKey(p.name(), k)] = nil
		} else {
			set[settingKey(p.name(), k)] = *v
		}
	}
	if len(set) > 0 {
		b, _ := json.Marshal(set)
		_, idx, err := n.core.PatchSettings(ctx, b)
		last = max(last, idx)
		if err != nil {
			return nil, last, err
		}
	}
	st := n.status(p, false)
	return &st, last, nil
}

// parsePatch reads a provider PATCH: member name to value (nil: the
// default). enabled takes a boolean, or "1", "0", "true", "false";
// service_account takes the key file's JSON object or its text; a secret
// sent back masked keeps its value.
func (n *Notifications) parsePatch(p provider, body []byte) (map[string]*string, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil || in == nil {
		return nil, engine.Errorf(engine.KindBadRequest, "The body must be a JSON object of the provider's settings")
	}
	known := map[string]member{memberEnabled: {key: memberEnabled}}
	var names []string
	for _, m := range p.members() {
		known[m.key] = m
		names = append(names, m.key)
	}
	out := map[string]*string{}
	bad := map[string]string{}
	for k, raw := range in {
		m, ok := known[k]
		if !ok {
			bad[k] = fmt.Sprintf("unknown setting of %s: enabled, %s", p.name(), strings.Join(names, ", "))
			continue
		}
		raw = bytes.TrimSpace(raw)
		if string(raw) == "null" {
			out[k] = nil
			continue
		}
		v, msg := memberValue(k, raw)
		switch {
		case msg != "":
			bad[k] = msg
			continue
		case v == engine.SecretMask && n.core.IsSecretSetting(settingKey(p.name(), k)):
			continue // sent back as listed: unchanged
		case m.url && v != "" && !validURL(v):
			bad[k] = "must be an http or https URL"
			continue
		}
		out[k] = &v
	}
	if len(bad) > 0 {
		return nil, engine.ValidationError(bad)
	}
	return out, nil
}

// memberValue is the setting text of one member's JSON value, or why it
// cannot be one.
func memberValue(k string, raw json.RawMessage) (string, string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if k == memberEnabled {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "1", "true":
				return "1", ""
			case "0", "false", "":
				return "0", ""
			}
			return "", "must be true or false"
		}
		return s, ""
	}
	var b bool
	if k == memberEnabled && json.Unmarshal(raw, &b) == nil {
		if b {
			return "1", ""
		}
		return "0", ""
	}
	if k == memberEnabled {
		return "", "must be true or false"
	}
	if k == "service_account" && len(raw) > 0 && raw[0] == '{' {
		var compact bytes.Buffer
		if json.Compact(&compact, raw) == nil {
			return compact.String(), ""
		}
	}
	return "", "must be a string"
}

// defaultOf is member k's default.
func (n *Notifications) defaultOf(p provider, k string) string {
	for _, m := range p.members() {
		if m.key == k {
			return m.def
		}
	}
	return "0"
}

// Probe is a test-connection's answer.
type Probe struct {
	Provider string `json:"provider"`
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
}

// TestConnection checks that provider name answers with its current
// settings and accepts their credentials, sending nothing (FCM: an access
// token is minted; APNs: a push to a token that cannot exist must be
// refused for the token, not the credentials; the hosted provider: its
// notification list is read). An enabled provider need not be enabled to
// be probed; one that is not configured is not called.
func (n *Notifications) TestConnection(ctx context.Context, name string) (*Probe, error) {
	p := providerNamed(name)
	if p == nil {
		return nil, errUnknownProvider
	}
	out := &Probe{Provider: p.name()}
	cfg := n.config(p)
	if bad := p.check(cfg); len(bad) > 0 {
		out.Error = "not configured: " + describe(bad)
		return out, nil
	}
	if n.push == nil {
		return nil, errNoPush
	}
	if err := n.push.Probe(ctx, p.name(), cfg); err != nil {
		out.Error = err.Error()
		return out, nil
	}
	out.OK = true
	return out, nil
}

// describe is a problems map as one line, members sorted.
func describe(bad map[string]string) string {
	keys := make([]string, 0, len(bad))
	for k := range bad {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+bad[k])
	}
	return strings.Join(parts, "; ")
}

// TestRequest is POST /admin/notifications/test.
type TestRequest struct {
	UserID    string         `json:"userId"`
	Title     string         `json:"title"`
	Body      string         `json:"body"`
	Data      map[string]any `json:"data"`
	Providers []string       `json:"providers"`
}

// TestResult answers a test send: what each provider did.
type TestResult struct {
	Deliveries []Delivery `json:"deliveries"`
}

// Test send defaults.
const (
	testTitle = "Test notification"
	testBody  = "A test push from svcd"
)

// TestSend sends a real push to a user now, through the enabled
// providers (of in.Providers, when given; naming one that is not enabled
// is an error), without an inbox row or a queue job, and answers what
// each provider did. Tokens reported dead are disabled, as a job would.
func (n *Notifications) TestSend(ctx context.Context, body []byte) (*TestResult, error) {
	var in TestRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, engine.Errorf(engine.KindBadRequest, "The body must be {userId, title?, body?, data?, providers?}: %v", err)
	}
	if in.Title == "" && in.Body == "" {
		in.Title, in.Body = testTitle, testBody
	}
	msg := Message{Title: in.Title, Body: in.Body, Data: in.Data}
	targets, err := n.checkMessage(in.UserID, msg, in.Providers, "providers")
	if err != nil {
		return nil, err
	}
	for _, name := range in.Providers {
		if p := providerNamed(name); p != nil && !n.enabled(p) {
			return nil, engine.FieldError("providers", name+" is not enabled")
		}
	}
	if len(targets) == 0 {
		return nil, engine.FieldError("providers", "no push provider is enabled")
	}
	if err := n.checkUser(ctx, in.UserID); err != nil {
		return nil, err
	}
	out := &TestResult{Deliveries: []Delivery{}}
	key := uuid.NewString()
	for _, p := range targets {
		d, err := n.deliver(ctx, p, in.UserID, PushMessage{Title: msg.Title, Body: msg.Body, Data: msg.Data, Key: key})
		if d == nil {
			return nil, err
		}
		out.Deliveries = append(out.Deliveries, *d)
	}
	return out, nil
}
