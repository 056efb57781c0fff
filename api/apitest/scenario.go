package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Scenario is one HTTP request and what its answer must look like.
type Scenario struct {
	Name   string
	Method string
	URL    string // path and query, relative to Server.URL
	// Body: nil sends none, a string is sent raw, anything else as JSON.
	Body    any
	Headers map[string]string
	// Admin adds the admin bearer token (creating the admin if needed).
	Admin bool
	// BeforeFunc runs before the request.
	BeforeFunc func(t testing.TB, s *Server)

	ExpectedStatus int
	// ExpectedContent are substrings the body must contain.
	ExpectedContent []string
	// NotExpectedContent are substrings the body must not contain.
	NotExpectedContent []string
	// ExpectedHeaders maps a header to its exact value, or "*" for present.
	ExpectedHeaders map[string]string
	// AfterFunc runs after the checks with the response body.
	AfterFunc func(t testing.TB, s *Server, body []byte)
}

// Run runs each scenario as a subtest, in order, against s. Beyond the
// scenario's own expectations, every answer must carry X-Svc-Node, and every
// error answer (status >= 400) must be the envelope {error, code} with code
// equal to the status.
func Run(t *testing.T, s *Server, scenarios []Scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			sc.Test(t, s)
		})
	}
}

// Test runs one scenario in t.
func (sc Scenario) Test(t testing.TB, s *Server) {
	t.Helper()
	if sc.BeforeFunc != nil {
		sc.BeforeFunc(t, s)
	}
	headers := map[string]string{}
	if sc.Admin {
		headers["Authorization"] = "Bearer " + s.AdminToken(t)
	}
	for k, v := range sc.Headers {
		headers[k] = v
	}
	method := sc.Method
	if method == "" {
		method = http.MethodGet
	}
	res, body := s.Do(t, method, sc.URL, sc.Body, headers)
	if sc.ExpectedStatus != 0 && res.StatusCode != sc.ExpectedStatus {
		t.Errorf("%s %s: status %d, want %d; body: %s", method, sc.URL, res.StatusCode, sc.ExpectedStatus, body)
	}
	for _, want := range sc.ExpectedContent {
		if !strings.Contains(string(body), want) {
			t.Errorf("%s %s: body lacks %q; body: %s", method, sc.URL, want, body)
		}
	}
	for _, bad := range sc.NotExpectedContent {
		if strings.Contains(string(body), bad) {
			t.Errorf("%s %s: body contains %q; body: %s", method, sc.URL, bad, body)
		}
	}
	for h, want := range sc.ExpectedHeaders {
		got, present := res.Header.Values(h), len(res.Header.Values(h)) > 0
		switch {
		case !present:
			t.Errorf("%s %s: header %s missing", method, sc.URL, h)
		case want != "*" && res.Header.Get(h) != want:
			t.Errorf("%s %s: header %s = %q, want %q", method, sc.URL, h, got, want)
		}
	}
	CheckCommon(t, res, body)
	if sc.AfterFunc != nil {
		sc.AfterFunc(t, s, body)
	}
}

// CheckCommon checks what every answer of the API must satisfy: the
// X-Svc-Node header, a numeric X-Svc-Index when there is one,
// WWW-Authenticate on a 401 (RFC 9110), and for errors the envelope {error, code} with code
// equal to the HTTP status.
func CheckCommon(t testing.TB, res *http.Response, body []byte) {
	t.Helper()
	if res.Header.Get("X-Svc-Node") == "" {
		t.Errorf("%s %s: no X-Svc-Node header", res.Request.Method, res.Request.URL.Path)
	}
	if idx := res.Header.Get("X-Svc-Index"); idx != "" {
		if n, err := strconv.ParseUint(idx, 10, 64); err != nil || n == 0 {
			t.Errorf("%s %s: X-Svc-Index %q is not a positive integer", res.Request.Method, res.Request.URL.Path, idx)
		}
	}
	if res.StatusCode == http.StatusUnauthorized && res.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("%s %s: 401 without WWW-Authenticate", res.Request.Method, res.Request.URL.Path)
	}
	if res.StatusCode < 400 || res.Request.Method == http.MethodHead {
		return
	}
	if pocketBasePath(res.Request.URL.Path) {
		CheckPocketBaseError(t, res, body)
		return
	}
	var env map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&env); err != nil {
		t.Errorf("%s %s: error body is not a JSON object: %q", res.Request.Method, res.Request.URL.Path, body)
		return
	}
	var msg string
	if err := json.Unmarshal(env["error"], &msg); err != nil || msg == "" {
		t.Errorf("%s %s: error envelope without a message: %s", res.Request.Method, res.Request.URL.Path, body)
	}
	var code int
	if err := json.Unmarshal(env["code"], &code); err != nil || code != res.StatusCode {
		t.Errorf("%s %s: envelope code %s, want %d", res.Request.Method, res.Request.URL.Path, env["code"], res.StatusCode)
	}
	for k := range env {
		if k != "error" && k != "code" && k != "details" {
			t.Errorf("%s %s: unexpected envelope member %q: %s", res.Request.Method, res.Request.URL.Path, k, body)
		}
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: error Content-Type %q", res.Request.Method, res.Request.URL.Path, ct)
	}
}

// Details returns an AfterFunc that checks that the error body's details
// has each of keys.
func Details(keys ...string) func(t testing.TB, s *Server, body []byte) {
	return func(t testing.TB, s *Server, body []byte) {
		t.Helper()
		var env struct {
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Errorf("decode error body: %v: %s", err, body)
			return
		}
		for _, k := range keys {
			if _, ok := env.Details[k]; !ok {
				t.Errorf("details lack %q: %s", k, body)
			}
		}
	}
}

// StatusIn returns an AfterFunc for scenarios whose answer may be one of
// several error statuses (leave ExpectedStatus 0): it reads the envelope's
// code, which CheckCommon has already matched against the HTTP status.
func StatusIn(codes ...int) func(t testing.TB, s *Server, body []byte) {
	return func(t testing.TB, s *Server, body []byte) {
		t.Helper()
		var env struct {
			Code int `json:"code"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Errorf("not an error envelope: %s", body)
			return
		}
		for _, c := range codes {
			if env.Code == c {
				return
			}
		}
		t.Errorf("status %d, want one of %v: %s", env.Code, codes, body)
	}
}
