package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestAuditLogQuery: GET /admin/audit-log answers SPEC.md's list shape
// {data: {data, page, perPage, totalItems, totalPages}}, newest first,
// and honours actorId, actionPrefix, from and to (unix seconds, both
// inclusive), each alone and together; perPage is clamped to 500; a
// malformed parameter is a 400 naming it.
func TestAuditLogQuery(t *testing.T) {
	t.Parallel()
	clock := newClock()
	t0 := clock.Now().Unix()
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	owner := s.AdminToken(t)
	ownerID := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(owner)))["data"])["id"].(string)

	// The log, oldest first; each entry's time is the clock's when its
	// action ran.
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")})) // t0
	clock.Advance(100 * time.Second)
	devID, dev := newAdmin(t, s, "dev@example.com", "developer") // t0+100
	clock.Advance(100 * time.Second)
	if res, body := s.Do(t, "POST", "/api/v1/admin/collections", coll("notes", "base", nil), bearer(dev)); res.StatusCode != http.StatusCreated { // t0+200
		t.Fatalf("developer creates a collection: %d %s", res.StatusCode, body)
	}
	if res, body := s.Do(t, "PATCH", "/api/v1/admin/settings", map[string]any{"app.url": "https://x.example"}, bearer(dev)); res.StatusCode != http.StatusForbidden { // t0+200
		t.Fatalf("developer changes settings: %d %s", res.StatusCode, body)
	}
	clock.Advance(100 * time.Second)
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"app.url": "https://x.example"}) // t0+300
	s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/collections/notes", nil)                           // t0+300

	const url = "/api/v1/admin/audit-log"
	at := func(d int64) string { return fmt.Sprint(t0 + d) }
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "everything, newest first, in the list shape", URL: url, Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 6, 1,
				"collections.delete", "settings.update", "settings.update", "collections.create", "admins.create", "collections.create")},
		{Name: "actorId keeps one admin's entries", URL: url + "?actorId=" + devID, Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 2, 1, "settings.update", "collections.create")},
		{Name: "the owner's", URL: url + "?actorId=" + ownerID, Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 4, 1, "collections.delete", "settings.update", "admins.create", "collections.create")},
		{Name: "an unknown actor: an empty page", URL: url + "?actorId=adm_nosuch", Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"data":[]`}, AfterFunc: auditPage(1, 30, 0, 0)},
		{Name: "actionPrefix", URL: url + "?actionPrefix=collections.", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 3, 1, "collections.delete", "collections.create", "collections.create")},
		{Name: "actionPrefix is a plain prefix", URL: url + "?actionPrefix=set", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 2, 1, "settings.update", "settings.update")},
		{Name: "an actionPrefix with LIKE wildcards matches them literally", URL: url + "?actionPrefix=%25", Admin: true,
			ExpectedStatus: http.StatusOK, AfterFunc: auditPage(1, 30, 0, 0)},
		{Name: "from and to are both inclusive", URL: url + "?from=" + at(100) + "&to=" + at(200), Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 3, 1, "settings.update", "collections.create", "admins.create")},
		{Name: "from alone", URL: url + "?from=" + at(201), Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 2, 1, "collections.delete", "settings.update")},
		{Name: "to alone", URL: url + "?to=" + at(99), Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 1, 1, "collections.create")},
		{Name: "from equal to to: that second", URL: url + "?from=" + at(300) + "&to=" + at(300), Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 30, 2, 1, "collections.delete", "settings.update")},
		{Name: "every filter together", URL: url + "?actorId=" + ownerID + "&actionPrefix=collections&from=" + at(1) + "&to=" + at(1000),
			Admin: true, ExpectedStatus: http.StatusOK, AfterFunc: auditPage(1, 30, 1, 1, "collections.delete")},
		{Name: "paging: page 1 of 2", URL: url + "?perPage=4", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 4, 6, 2, "collections.delete", "settings.update", "settings.update", "collections.create")},
		{Name: "paging: page 2 of 2", URL: url + "?perPage=4&page=2", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(2, 4, 6, 2, "admins.create", "collections.create")},
		{Name: "paging: past the end is an empty page", URL: url + "?perPage=4&page=3", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(3, 4, 6, 2)},
		{Name: "paging with a filter counts the filtered entries", URL: url + "?actionPrefix=collections.&perPage=2&page=2", Admin: true,
			ExpectedStatus: http.StatusOK, AfterFunc: auditPage(2, 2, 3, 2, "collections.create")},
		{Name: "perPage 500 is allowed", URL: url + "?perPage=500", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 500, 6, 1, "collections.delete", "settings.update", "settings.update", "collections.create", "admins.create", "collections.create")},
		{Name: "perPage above 500 is clamped to 500", URL: url + "?perPage=100000", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: auditPage(1, 500, 6, 1, "collections.delete", "settings.update", "settings.update", "collections.create", "admins.create", "collections.create")},
	})

	bad := []struct{ name, query, msg string }{
		{"perPage", "perPage=0", "perPage must be a positive integer"},
		{"perPage", "perPage=-5", "perPage must be a positive integer"},
		{"perPage", "perPage=ten", "perPage must be a positive integer"},
		{"page", "page=0", "page must be a positive integer"},
		{"page", "page=1.5", "page must be a positive integer"},
		{"from", "from=2024-01-01", "from must be a time in unix seconds"},
		{"from", "from=-1", "from must be a time in unix seconds"},
		{"to", "to=soon", "to must be a time in unix seconds"},
		{"to", "from=" + at(10) + "&to=" + at(9), "to must not be before from"},
	}
	for _, b := range bad {
		apitest.Scenario{Method: "GET", URL: url + "?" + b.query, Admin: true, ExpectedStatus: http.StatusBadRequest,
			ExpectedContent: []string{"Invalid audit log query: " + b.msg}, AfterFunc: apitest.Details(b.name)}.Test(t, s)
	}
	// Every malformed parameter is named, not only the first.
	apitest.Scenario{Method: "GET", URL: url + "?page=x&perPage=0&from=y&to=z", Admin: true, ExpectedStatus: http.StatusBadRequest,
		AfterFunc: apitest.Details("page", "perPage", "from", "to")}.Test(t, s)
}

// auditPage checks an audit log answer: its page figures and the actions
// of its entries, in order.
func auditPage(page, perPage, totalItems, totalPages int, actions ...string) func(t testing.TB, s *apitest.Server, body []byte) {
	return func(t testing.TB, _ *apitest.Server, body []byte) {
		t.Helper()
		var out struct {
			Data *struct {
				Data       []map[string]any `json:"data"`
				Page       *int             `json:"page"`
				PerPage    *int             `json:"perPage"`
				TotalItems *int             `json:"totalItems"`
				TotalPages *int             `json:"totalPages"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &out); err != nil || out.Data == nil || out.Data.Data == nil ||
			out.Data.Page == nil || out.Data.PerPage == nil || out.Data.TotalItems == nil || out.Data.TotalPages == nil {
			t.Fatalf("not {data: {data, page, perPage, totalItems, totalPages}} (%v): %s", err, body)
		}
		d := out.Data
		if got := [4]int{*d.Page, *d.PerPage, *d.TotalItems, *d.TotalPages}; got != [4]int{page, perPage, totalItems, totalPages} {
			t.Errorf("page, perPage, totalItems, totalPages = %v, want %v", got, [4]int{page, perPage, totalItems, totalPages})
		}
		var got []string
		for _, e := range d.Data {
			got = append(got, fmt.Sprint(e["action"]))
		}
		if !slices.Equal(got, actions) {
			t.Errorf("actions %s, want %s", strings.Join(got, ", "), strings.Join(actions, ", "))
		}
	}
}

// TestLogSearchIsNotAudited: a log search is a read sent as a POST; it
// writes no audit entry (a write to the settings does, for contrast).
func TestLogSearchIsNotAudited(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	adm := s.AdminHeaders(t, nil)
	historyDo(t, s, "POST", "/api/v1/admin/logs/search", map[string]any{"query": "$"}, adm, http.StatusOK)
	historyDo(t, s, "PATCH", "/api/v1/admin/settings", map[string]any{"audit.retention_days": "60"}, adm, http.StatusOK)
	log := string(must(t, s, "GET", "/api/v1/admin/audit-log", adm))
	if strings.Contains(log, "logs") || !strings.Contains(log, "settings") {
		t.Fatalf("audit log after a log search and a settings write: %s", log)
	}
}
