package api_test

import (
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestErrorEnvelope: every error is {error, code} with code equal to the
// HTTP status (apitest.Run checks that for every scenario), unknown routes
// are a 404 envelope and wrong methods a 405 envelope, all with X-Svc-Node.
func TestErrorEnvelope(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}, "view_rule", ""))
	id := s.CreateRecord(t, "posts", map[string]any{"title": "x"})["id"].(string)

	notFound := []string{"/", "/nope", "/api", "/api/v1", "/api/v1/", "/api/v1/posts/" + id + "/extra", "/_", "/_/health/x"}
	var sc []apitest.Scenario
	for _, u := range notFound {
		sc = append(sc, apitest.Scenario{
			Name:            "unknown route " + u,
			URL:             u,
			ExpectedStatus:  http.StatusNotFound,
			ExpectedContent: []string{`{"error":"The requested resource wasn't found","code":404}`},
		})
	}
	wrongMethod := []struct{ method, url string }{
		{http.MethodPost, "/_/health"},
		{http.MethodDelete, "/_/cluster"},
		{http.MethodPut, "/_/ready"},
		{http.MethodPut, "/api/v1/posts"},
		{http.MethodDelete, "/api/v1/posts"},
		{http.MethodPost, "/api/v1/posts/" + id},
		{http.MethodPut, collectionsURL + "/posts"},
		{http.MethodPost, collectionsURL + "/posts"},
		{http.MethodPost, "/api/v1/admin/setup/status"},
		{http.MethodGet, "/api/v1/admin/auth/login"},
	}
	for _, r := range wrongMethod {
		for _, admin := range []bool{false, true} {
			sc = append(sc, apitest.Scenario{
				Name:            r.method + " " + r.url,
				Method:          r.method,
				URL:             r.url,
				Admin:           admin,
				ExpectedStatus:  http.StatusMethodNotAllowed,
				ExpectedContent: []string{`{"error":"Method not allowed","code":405}`},
			})
		}
	}
	// Outside /api/v1, /api/ is PocketBase's (api/pbcompat): its unknown
	// paths and methods answer PocketBase's envelope.
	sc = append(sc,
		apitest.Scenario{
			Name: "unknown PocketBase path", URL: "/api/v2/posts", ExpectedStatus: http.StatusNotFound,
			ExpectedContent: []string{`{"status":404,"message":"The requested resource wasn't found.","data":{}}`},
		},
		apitest.Scenario{
			Name: "unknown PocketBase record path", URL: "/api/collections/posts/records/" + id + "/extra", ExpectedStatus: http.StatusNotFound,
			ExpectedContent: []string{`{"status":404,"message":"The requested resource wasn't found.","data":{}}`},
		},
		apitest.Scenario{
			Name: "wrong method on a PocketBase path", Method: http.MethodPost, URL: "/api/collections/posts/records/" + id,
			ExpectedStatus:  http.StatusMethodNotAllowed,
			ExpectedHeaders: map[string]string{"Allow": "GET, HEAD, PATCH, DELETE"},
			ExpectedContent: []string{`{"status":405,"message":"Method Not Allowed.","data":{}}`},
		},
	)
	sc = append(sc,
		apitest.Scenario{
			Name:            "a 422 carries details",
			Method:          http.MethodPost,
			URL:             collectionsURL,
			Admin:           true,
			Body:            map[string]any{"name": "1"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"error":"Validation failed","code":422,"details":{"name":`},
		},
		apitest.Scenario{
			Name:               "errors without details omit the member",
			URL:                "/api/v1/nope",
			ExpectedStatus:     http.StatusNotFound,
			NotExpectedContent: []string{"details"},
		},
		apitest.Scenario{
			Name:            "a success is wrapped in data",
			URL:             "/api/v1/posts/" + id,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`{"data":{"id":"` + id + `"`},
			ExpectedHeaders: map[string]string{"Content-Type": "application/json"},
		},
	)
	apitest.Run(t, s, sc)

	t.Run("a body over 16 MiB is 413", func(t *testing.T) {
		big := `{"title":"` + strings.Repeat("x", 16<<20) + `"}`
		res, body := s.Do(t, http.MethodPost, "/api/v1/posts", big, s.AdminHeaders(t, nil))
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "too large") {
			t.Errorf("status %d: %.200s", res.StatusCode, body)
		}
	})
}

// TestMethodNotAllowedHasAllow: RFC 9110 section 15.5.6: "The origin server
// MUST generate an Allow header field in a 405 response".
func TestMethodNotAllowedHasAllow(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "POST /_/health",
			Method:          http.MethodPost,
			URL:             "/_/health",
			ExpectedStatus:  http.StatusMethodNotAllowed,
			ExpectedHeaders: map[string]string{"Allow": "*"},
		},
		{
			Name:            "PUT /api/v1/admin/collections/posts",
			Method:          http.MethodPut,
			URL:             collectionsURL + "/posts",
			Admin:           true,
			ExpectedStatus:  http.StatusMethodNotAllowed,
			ExpectedHeaders: map[string]string{"Allow": "*"},
		},
	})
}

// TestHeadRequests: RFC 9110 section 9.1: "All general-purpose servers MUST
// support the methods GET and HEAD"; load balancers often probe with HEAD.
func TestHeadRequests(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", nil, "view_rule", ""))
	for _, u := range []string{"/_/health", "/_/ready", "/api/v1/posts"} {
		apitest.Scenario{
			Name:           "HEAD " + u,
			Method:         http.MethodHead,
			URL:            u,
			ExpectedStatus: http.StatusOK,
		}.Test(t, s)
	}
}
