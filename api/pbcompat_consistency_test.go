package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestPocketBaseConsistencySetting: pocketbase.consistency and
// pocketbase.enabled are the layer's settings (pbcompat.SettingDefs):
// listed with their defaults and checked when set.
func TestPocketBaseConsistencySetting(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "listed with their defaults", URL: settingsURL, Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"pocketbase.consistency":"strong"`, `"pocketbase.enabled":"1"`}},
		{Name: "a consistency other than strong or local is a 422", Method: "PATCH", URL: settingsURL, Admin: true,
			Body: map[string]any{"pocketbase.consistency": "eventual"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`must be \"strong\" or \"local\"`}, AfterFunc: apitest.Details("pocketbase.consistency")},
		{Name: "enabled must be a switch", Method: "PATCH", URL: settingsURL, Admin: true,
			Body: map[string]any{"pocketbase.enabled": "maybe"}, ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc: apitest.Details("pocketbase.enabled")},
		{Name: "local is accepted", Method: "PATCH", URL: settingsURL, Admin: true,
			Body: map[string]any{"pocketbase.consistency": "local"}, ExpectedStatus: http.StatusOK},
		{Name: "strong too", Method: "PATCH", URL: settingsURL, Admin: true,
			Body: map[string]any{"pocketbase.consistency": "Strong"}, ExpectedStatus: http.StatusOK},
	})
}

// TestPocketBaseConsistencyLocal observes the setting on a node that
// cannot confirm a read index (the other two of three are down, so no
// leader): with pocketbase.consistency=local, a PocketBase read answers
// from the node's replica; the same read with X-Svc-Consistency: strong
// needs the read index and fails.
func TestPocketBaseConsistencyLocal(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	leader := c.Leader(t)
	tok := c.AdminToken(t)
	leader.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}, "view_rule", ""))
	id := leader.CreateRecord(t, "posts", map[string]any{"title": "kept"})["id"].(string)
	mustDo(t, leader, http.StatusOK, "PATCH", settingsURL, map[string]any{"pocketbase.consistency": "local"}, bearer(tok))
	c.Sync(t)
	fols := c.Followers(t)
	last := fols[1]
	fols[0].Stop()
	leader.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for last.Stack.Node.LeaderID() != "" || last.Stack.Node.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatalf("the last node still names leader %q", last.Stack.Node.LeaderID())
		}
		time.Sleep(20 * time.Millisecond)
	}
	path := "/api/collections/posts/records/" + id
	res, body := last.Do(t, "GET", path, nil, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"title":"kept"`) {
		t.Errorf("a local read without a leader: %d %s", res.StatusCode, body)
	}
	res, body = last.Do(t, "GET", path, nil, map[string]string{"X-Svc-Consistency": "strong"})
	if res.StatusCode < 500 {
		t.Errorf("a strong read without a leader: %d %s", res.StatusCode, body)
	}
}
