package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
	"svcd/api/dashboard"
)

// TestDashboardRoutes: the dashboard answers /_/ and its own routes with
// the page and its security headers, serves its assets, and shadows none
// of the probes or /_/join.
func TestDashboardRoutes(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	page := map[string]string{
		"Content-Security-Policy": dashboard.CSP,
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Content-Type":            "text/html; charset=utf-8",
	}
	apitest.Run(t, srv, []apitest.Scenario{
		{Name: "root", Method: http.MethodGet, URL: "/_/", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`<script type="module" src="/_/assets/app.js">`}, ExpectedHeaders: page},
		{Name: "client route", Method: http.MethodGet, URL: "/_/collections/posts/records/abc", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`<main id="main"`}, ExpectedHeaders: page},
		{Name: "head", Method: http.MethodHead, URL: "/_/members", ExpectedStatus: http.StatusOK, ExpectedHeaders: page},
		{Name: "tokens page", Method: http.MethodGet, URL: "/_/tokens", ExpectedStatus: http.StatusOK, ExpectedHeaders: page},
		{Name: "files page", Method: http.MethodGet, URL: "/_/files?collection=albums&page=2", ExpectedStatus: http.StatusOK, ExpectedHeaders: page},
		{Name: "not a page", Method: http.MethodGet, URL: "/_/nope", ExpectedStatus: http.StatusNotFound,
			ExpectedContent: []string{`{"error":"The requested resource wasn't found","code":404}`}},
		{Name: "below a probe", Method: http.MethodGet, URL: "/_/health/x", ExpectedStatus: http.StatusNotFound},
		{Name: "asset", Method: http.MethodGet, URL: "/_/assets/app.js", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{"svcd:navigate"},
			ExpectedHeaders: map[string]string{"Content-Type": "text/javascript; charset=utf-8", "Content-Security-Policy": dashboard.CSP}},
		{Name: "missing asset", Method: http.MethodGet, URL: "/_/assets/nope.js", ExpectedStatus: http.StatusNotFound},
		{Name: "no escape", Method: http.MethodGet, URL: "/_/assets/../../server.go", ExpectedStatus: http.StatusNotFound,
			NotExpectedContent: []string{"package api"}},
		{Name: "health not shadowed", Method: http.MethodGet, URL: "/_/health", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"raft_state"`}, NotExpectedContent: []string{"<!doctype"}},
		{Name: "ready not shadowed", Method: http.MethodGet, URL: "/_/ready", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"migrated":true`}},
		{Name: "cluster not shadowed", Method: http.MethodGet, URL: "/_/cluster", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"leader_id"`}},
		{Name: "join not shadowed", Method: http.MethodGet, URL: "/_/join", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"join_auth"`}},
		{Name: "no writes", Method: http.MethodPost, URL: "/_/", ExpectedStatus: http.StatusMethodNotAllowed},
	})
}
