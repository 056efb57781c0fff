package api_test

import (
	"net/http"
	"regexp"
	"testing"

	"svcd/api/apitest"
)

// TestWebhookCRUD: every field of SPEC.md's Webhook with its default and
// its validation, the secret masked unless revealed, partial updates,
// deletion, and the developer role.
func TestWebhookCRUD(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	var id, secret string
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "create with defaults", Method: http.MethodPost, URL: webhooksURL, Admin: true,
			Body:           map[string]any{"url": "https://example.com/hook"},
			ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{`"url":"https://example.com/hook"`, `"events":[]`, `"custom_headers":{}`,
				`"enabled":true`, `"retry_max":3`, `"retry_backoff":"exponential"`, `"retry_delay_ms":1000`, `"timeout_ms":30000`},
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				d := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
				id, secret = d["id"].(string), d["secret"].(string)
				if !regexp.MustCompile(`^whk_[a-z0-9]{15}$`).MatchString(id) {
					t.Errorf("id %q", id)
				}
				if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(secret) {
					t.Errorf("generated secret %q is not 32 bytes of hex", secret)
				}
				if apitest.Int(t, d["created"]) == 0 || apitest.Int(t, d["updated"]) == 0 {
					t.Errorf("timestamps: %v", d)
				}
			},
		},
		{
			Name: "create with every field", Method: http.MethodPost, URL: webhooksURL, Admin: true,
			Body: map[string]any{"url": "http://hooks.example.com/x", "events": []string{"posts.create", "posts.*", "*", "posts.create"},
				"secret": "my-secret", "custom_headers": map[string]any{"X-Tenant": "acme", "Authorization": "Bearer t",
					"Content-Type": "text/plain", "User-Agent": "me", "X-Svc-Signature": "forged", "Host": "evil",
					"Cookie": "a=b", "X-Forwarded-For": "1.2.3.4", "Proxy-Authorization": "x", "Content-Length": "1"},
				"enabled": false, "retry_max": 5, "retry_backoff": "fixed", "retry_delay_ms": 250, "timeout_ms": 200},
			ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{`"events":["*","posts.*","posts.create"]`, `"secret":"my-secret"`,
				`"custom_headers":{"authorization":"Bearer t","x-tenant":"acme"}`, `"enabled":false`, `"retry_max":5`,
				`"retry_backoff":"fixed"`, `"retry_delay_ms":250`, `"timeout_ms":1000`},
		},
		{
			Name: "url required", Method: http.MethodPost, URL: webhooksURL, Admin: true, Body: map[string]any{"events": []string{"*"}},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("url"),
		},
		{
			Name: "url must be http or https", Method: http.MethodPost, URL: webhooksURL, Admin: true, Body: map[string]any{"url": "ftp://example.com/x"},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("url"),
		},
		{
			Name: "every bad field at once", Method: http.MethodPost, URL: webhooksURL, Admin: true,
			Body: map[string]any{"url": "https://example.com", "events": []string{"posts.cr*"}, "retry_max": 0,
				"retry_backoff": "linear", "retry_delay_ms": -1, "timeout_ms": 300001, "enabled": "yes",
				"custom_headers": map[string]any{"Bad Name": "x"}, "secret": 42},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc: apitest.Details("events", "retry_max", "retry_backoff", "retry_delay_ms", "timeout_ms", "enabled",
				"custom_headers", "secret"),
		},
		{
			Name: "a header value on two lines", Method: http.MethodPost, URL: webhooksURL, Admin: true,
			Body:           map[string]any{"url": "https://example.com", "custom_headers": map[string]any{"X-A": "a\r\nX-B: b"}},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("custom_headers"),
		},
		{
			Name: "not an object", Method: http.MethodPost, URL: webhooksURL, Admin: true, Body: `[1]`,
			ExpectedStatus: http.StatusBadRequest,
		},
		{
			Name: "list masks secrets", Method: http.MethodGet, URL: webhooksURL, Admin: true,
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"secret":"********"`, `"url":"https://example.com/hook"`, `"url":"http://hooks.example.com/x"`},
			NotExpectedContent: []string{`my-secret`},
		},
		{
			Name: "list reveals on request", Method: http.MethodGet, URL: webhooksURL + "?reveal=1", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"secret":"my-secret"`},
		},
	})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "get one", Method: http.MethodGet, URL: webhooksURL + "/" + id, Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"id":"` + id + `"`, `"secret":"********"`},
		},
		{
			Name: "get one revealed", Method: http.MethodGet, URL: webhooksURL + "/" + id + "?reveal=1", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"secret":"` + secret + `"`},
		},
		{
			Name: "patch some fields", Method: http.MethodPatch, URL: webhooksURL + "/" + id, Admin: true,
			Body:           map[string]any{"events": []string{"orders.*"}, "enabled": false, "secret": "********"},
			ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"events":["orders.*"]`, `"enabled":false`, `"url":"https://example.com/hook"`,
				`"retry_max":3`, `"secret":"********"`},
		},
		{
			Name: "the masked secret sent back kept the secret", Method: http.MethodGet, URL: webhooksURL + "/" + id + "?reveal=1", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"secret":"` + secret + `"`},
		},
		{
			Name: "patch a bad value", Method: http.MethodPatch, URL: webhooksURL + "/" + id, Admin: true,
			Body: map[string]any{"url": "notaurl"}, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("url"),
		},
		{
			Name: "patch an unknown webhook", Method: http.MethodPatch, URL: webhooksURL + "/whk_nope", Admin: true,
			Body: map[string]any{"enabled": true}, ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "deliveries of an unknown webhook", Method: http.MethodGet, URL: webhooksURL + "/whk_nope/deliveries", Admin: true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "deliveries with a bad limit", Method: http.MethodGet, URL: webhooksURL + "/" + id + "/deliveries?limit=x&since=-1", Admin: true,
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("limit", "since"),
		},
		{
			Name: "test an unknown webhook", Method: http.MethodPost, URL: webhooksURL + "/whk_nope/test", Admin: true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "delete", Method: http.MethodDelete, URL: webhooksURL + "/" + id, Admin: true,
			ExpectedStatus: http.StatusNoContent, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
		},
		{
			Name: "gone after delete", Method: http.MethodGet, URL: webhooksURL + "/" + id, Admin: true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "delete again", Method: http.MethodDelete, URL: webhooksURL + "/" + id, Admin: true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name: "anonymous", Method: http.MethodGet, URL: webhooksURL, ExpectedStatus: http.StatusUnauthorized,
		},
	})

	// A null secret draws a new one.
	w := createWebhook(t, s, map[string]any{"url": "https://example.com/a", "secret": "first"})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, webhooksURL+"/"+w["id"].(string), map[string]any{"secret": nil})
	got := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, webhooksURL+"/"+w["id"].(string)+"?reveal=1", nil)["data"])
	if sec := got["secret"].(string); sec == "first" || len(sec) != 64 {
		t.Errorf("a null secret should draw a new random one, got %q", sec)
	}
}

// TestWebhookRoles: webhooks are the developer's (SPEC.md), reads too:
// their URLs, headers and secrets are configuration.
func TestWebhookRoles(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	// Loopback, which the egress guard refuses by default: the test
	// delivery fails at once, sending nothing.
	hook := createWebhook(t, s, map[string]any{"url": "http://127.0.0.1:9/hook"})["id"].(string)
	tokens := map[string]string{}
	for _, role := range []string{"viewer", "editor", "developer"} {
		_, tokens[role] = newAdmin(t, s, role+"@example.com", role)
	}
	for role, tok := range tokens {
		want := http.StatusForbidden
		if role == "developer" {
			want = http.StatusOK
		}
		h := map[string]string{"Authorization": "Bearer " + tok}
		for _, req := range []struct {
			method, url string
			body        any
			ok          int
		}{
			{http.MethodGet, webhooksURL, nil, http.StatusOK},
			{http.MethodGet, webhooksURL + "/" + hook + "/deliveries", nil, http.StatusOK},
			{http.MethodPost, webhooksURL, map[string]any{"url": "https://example.com/" + role}, http.StatusCreated},
			{http.MethodPatch, webhooksURL + "/" + hook, map[string]any{"enabled": true}, http.StatusOK},
		} {
			exp := want
			if want == http.StatusOK {
				exp = req.ok
			}
			res, body := s.Do(t, req.method, req.url, req.body, h)
			if res.StatusCode != exp {
				t.Errorf("%s %s %s: %d, want %d: %s", role, req.method, req.url, res.StatusCode, exp, body)
			}
		}
	}
	// Admin writes are audited as webhooks.<verb>; the test as webhooks.test.
	s.AdminDo(t, http.MethodPost, webhooksURL+"/"+hook+"/test", nil)
	out := s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/audit-log?actionPrefix=webhooks.", nil)
	actions := map[string]bool{}
	for _, e := range apitest.List(t, apitest.Obj(t, out["data"])["data"]) {
		actions[apitest.Obj(t, e)["action"].(string)] = true
	}
	for _, a := range []string{"webhooks.create", "webhooks.update", "webhooks.test"} {
		if !actions[a] {
			t.Errorf("audit log lacks %s: %v", a, actions)
		}
	}
}
