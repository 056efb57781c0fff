package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

const (
	retentionURL    = "/api/v1/admin/retention"
	retentionRunURL = "/api/v1/admin/retention/run"
)

// TestRetentionHistoryAndAudit: record history is kept forever by
// default; with history.retention_days set, entries older than it go and
// younger ones stay (a record whose entries all went lists no history and
// keeps its row). Audit entries past audit.retention_days go; the run
// itself is audited once.
func TestRetentionHistoryAndAudit(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	c := public(coll("pages", "base", []map[string]any{f("title", "text")}))
	c["history_enabled"] = true
	s.CreateCollection(t, c)
	old := s.CreateRecord(t, "pages", map[string]any{"title": "old"})["id"].(string)
	clock.Advance(100 * 24 * time.Hour)
	adm := bearer(loginAdmin(t, s)) // the first token expired with the clock
	young := apitest.Obj(t, historyDo(t, s, "POST", "/api/v1/pages", map[string]any{"title": "young"}, adm, http.StatusCreated)["data"])["id"].(string)
	run := func() map[string]any {
		t.Helper()
		return apitest.Obj(t, apitest.Obj(t, historyDo(t, s, "POST", retentionRunURL, nil, adm, http.StatusOK)["data"])["pruned"])
	}

	pruned := run()
	if _, on := pruned["history"]; on {
		t.Fatalf("history pruned though off by default: %v", pruned)
	}
	if pruned["audit"] == nil || pruned["audit"].(float64) < 1 {
		t.Fatalf("the audit entries of 100 days ago were kept (90 days by default): %v", pruned)
	}
	if h := getHistory(t, s, "", "/api/v1/pages/"+old+"/history", http.StatusOK); len(h.Data.Data) != 1 {
		t.Fatalf("history of the old record: %d entries, want 1", len(h.Data.Data))
	}

	historyDo(t, s, "PATCH", settingsURL, map[string]any{"history.retention_days": "30"}, adm, http.StatusOK)
	pruned = run()
	if pruned["history"] != float64(1) {
		t.Fatalf("pruned %v, want the old record's one history entry", pruned)
	}
	if h := getHistory(t, s, "", "/api/v1/pages/"+old+"/history", http.StatusOK); len(h.Data.Data) != 0 {
		t.Fatalf("history of the old record after pruning: %d entries", len(h.Data.Data))
	}
	if h := getHistory(t, s, "", "/api/v1/pages/"+young+"/history", http.StatusOK); len(h.Data.Data) != 1 {
		t.Fatalf("history of the young record after pruning: %d entries, want 1", len(h.Data.Data))
	}
	historyDo(t, s, "GET", "/api/v1/pages/"+old, nil, adm, http.StatusOK)

	log := string(must(t, s, "GET", "/api/v1/admin/audit-log?actionPrefix=retention.", adm))
	if strings.Count(log, `"action":"retention.prune"`) != 2 {
		t.Fatalf("audit log of the two runs: %s", log)
	}

	view := string(must(t, s, "GET", retentionURL, adm))
	if !strings.Contains(view, `"interval_seconds":"3600"`) || !strings.Contains(view, `"setting":"history.retention_days","value":"30"`) {
		t.Fatalf("GET %s: %s", retentionURL, view)
	}
}

// TestRetentionSettingsAndRoles: malformed retention settings are 422
// naming the key; the routes are the owner's.
func TestRetentionSettingsAndRoles(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.AdminToken(t)
	var sc []apitest.Scenario
	for key, bad := range map[string]string{
		"history.retention_days": "-1", "audit.retention_days": "x", "workflows.retention_days": "1.5",
		"queues.dead_retention_days": "99999", "retention.interval_seconds": "10",
	} {
		sc = append(sc, apitest.Scenario{Name: key, Method: "PATCH", URL: settingsURL, Body: map[string]any{key: bad},
			Headers: s.AdminHeaders(t, nil), ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"` + key + `"`}})
	}
	for _, role := range []string{"viewer", "editor", "developer"} {
		_, tok := newAdmin(t, s, role+"@example.com", role)
		sc = append(sc,
			apitest.Scenario{Name: role + " run", Method: "POST", URL: retentionRunURL, Headers: bearer(tok), ExpectedStatus: http.StatusForbidden},
			apitest.Scenario{Name: role + " get", URL: retentionURL, Headers: bearer(tok), ExpectedStatus: http.StatusForbidden})
	}
	sc = append(sc, apitest.Scenario{Name: "anonymous run", Method: "POST", URL: retentionRunURL, ExpectedStatus: http.StatusUnauthorized})
	apitest.Run(t, s, sc)
}

// loginAdmin signs the test server's admin in again.
func loginAdmin(t *testing.T, s *apitest.Server) string {
	t.Helper()
	out := historyDo(t, s, "POST", "/api/v1/admin/auth/login",
		map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword}, nil, http.StatusOK)
	return apitest.Obj(t, out["data"])["token"].(string)
}
