package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/fsm"
)

// TestRetentionThreeNodes: pruning started on a follower goes through the
// leader's log: every node drops the same history entries and answers the
// same digest at the same index.
func TestRetentionThreeNodes(t *testing.T) {
	t.Parallel()
	clock := newClock()
	c := apitest.StartCluster(t, 3, apitest.Options{Clock: clock.Now})
	c.AdminToken(t)
	leader := c.Leader(t)
	pages := public(coll("pages", "base", []map[string]any{f("title", "text")}))
	pages["history_enabled"] = true
	leader.CreateCollection(t, pages)
	for i := range 12 {
		leader.CreateRecord(t, "pages", map[string]any{"title": fmt.Sprintf("old %d", i)})
	}
	clock.Advance(40 * 24 * time.Hour)
	tok := loginAdmin(t, leader)
	for i := range 3 {
		historyDo(t, leader, "POST", "/api/v1/pages", map[string]any{"title": fmt.Sprintf("young %d", i)}, bearer(tok), http.StatusCreated)
	}
	historyDo(t, leader, "PATCH", settingsURL, map[string]any{"history.retention_days": "30"}, bearer(tok), http.StatusOK)
	c.Sync(t)
	out := historyDo(t, c.Followers(t)[0], "POST", retentionRunURL, nil, bearer(tok), http.StatusOK)
	if got := apitest.Obj(t, out["data"])["pruned"].(map[string]any)["history"]; got != float64(12) {
		t.Fatalf("pruned %v, want 12 history entries", out)
	}
	c.Sync(t)
	sameDigest(t, c.Nodes, tok)
	for _, n := range c.Nodes {
		var left int64
		if err := n.Stack.Store.View(t.Context(), func(r *fsm.Reader) error {
			return r.QueryRow(`SELECT count(*) FROM _svc_history`).Scan(&left)
		}); err != nil {
			t.Fatal(err)
		}
		if left != 3 {
			t.Errorf("%s keeps %d history entries, want the 3 young ones", n.Stack.Node.NodeID(), left)
		}
	}
}
