package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
	"svcd/api/dashboard"
)

// TestDashboardAdminPagesRoutes: the routes of the users, admins,
// settings, logs, audit, webhooks and flags pages answer the page (so a
// reload keeps the page), their modules are served, and a path beside
// them is still the API's 404.
func TestDashboardAdminPagesRoutes(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	page := map[string]string{"Content-Security-Policy": dashboard.CSP, "Content-Type": "text/html; charset=utf-8"}
	var sc []apitest.Scenario
	for _, u := range []string{"/_/users", "/_/users/members", "/_/admins", "/_/settings", "/_/logs", "/_/audit",
		"/_/webhooks", "/_/webhooks/whk_abc", "/_/flags", "/_/flags/new-ui"} {
		sc = append(sc, apitest.Scenario{Name: "page " + u, Method: http.MethodGet, URL: u, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`<main id="main"`}, ExpectedHeaders: page})
	}
	for _, m := range []string{"users", "admins", "settings", "logs", "audit", "webhooks", "flags"} {
		sc = append(sc, apitest.Scenario{Name: "module " + m, Method: http.MethodGet, URL: "/_/assets/" + m + ".js",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{"export async function"},
			ExpectedHeaders: map[string]string{"Content-Type": "text/javascript; charset=utf-8"}})
	}
	sc = append(sc, apitest.Scenario{Name: "beside the pages", Method: http.MethodGet, URL: "/_/user", ExpectedStatus: http.StatusNotFound,
		ExpectedContent: []string{`{"error":"The requested resource wasn't found","code":404}`}})
	apitest.Run(t, srv, sc)
}
