package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Membership and leadership through any node, on a real three-node
// cluster in this process (Raft over loopback TCP with the cluster key).

// clusterView is the data of GET /api/v1/admin/cluster, as far as these
// tests read it.
type clusterView struct {
	LeaderID string `json:"leader_id"`
	Members  []struct {
		ID       string `json:"id"`
		Suffrage string `json:"suffrage"`
		HTTPAddr string `json:"http_addr"`
	} `json:"members"`
}

// viewOf reads GET /api/v1/admin/cluster on s.
func viewOf(t testing.TB, s *apitest.Server, tok string) clusterView {
	t.Helper()
	var out struct{ Data clusterView }
	if err := json.Unmarshal(must(t, s, "GET", "/api/v1/admin/cluster", bearer(tok)), &out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// hostPort is a node's HTTP address as members advertise it.
func hostPort(s *apitest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

func id(s *apitest.Server) string { return s.Stack.Node.NodeID() }

// TestClusterMembershipThroughFollowers: a membership change sent to a
// follower is forwarded to the leader like any write: a non-voter added
// through one follower joins and replicates, and is removed through the
// other; the changes are in the audit log.
func TestClusterMembershipThroughFollowers(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	leader := c.Leader(t)
	tok := c.AdminToken(t)
	fols := c.Followers(t)
	n4 := c.StartDetached(t, "node4")

	apitest.Run(t, fols[0], []apitest.Scenario{
		{Name: "a follower adds a non-voter", Method: "POST", URL: "/api/v1/admin/cluster/members", Headers: bearer(tok),
			Body:           map[string]any{"id": "node4", "raft_addr": n4.RaftAddr, "voter": false},
			ExpectedStatus: http.StatusCreated, ExpectedContent: []string{`"id":"node4"`, `"voter":false`}},
		{Name: "a malformed change is still refused on the follower", Method: "POST", URL: "/api/v1/admin/cluster/members", Headers: bearer(tok),
			Body: map[string]any{"id": "node9"}, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("id")},
	})
	c.WaitReady(t, n4)
	// node4 replicates: a collection created through a follower reaches it.
	res, body := fols[1].Do(t, "POST", "/api/v1/admin/collections", coll("things", "base", nil), bearer(tok))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create through a follower: %d %s", res.StatusCode, body)
	}
	must(t, n4, "GET", "/api/v1/admin/collections/things", map[string]string{
		"Authorization": "Bearer " + tok, "X-Svc-Min-Index": res.Header.Get("X-Svc-Index")})
	v := viewOf(t, leader, tok)
	if i := slices.IndexFunc(v.Members, func(m struct {
		ID       string `json:"id"`
		Suffrage string `json:"suffrage"`
		HTTPAddr string `json:"http_addr"`
	}) bool {
		return m.ID == "node4"
	}); i < 0 || v.Members[i].Suffrage != "nonvoter" || v.Members[i].HTTPAddr != hostPort(n4) {
		t.Fatalf("the leader's view after the add: %+v", v)
	}

	apitest.Run(t, fols[1], []apitest.Scenario{
		{Name: "the other follower removes it", Method: "DELETE", URL: "/api/v1/admin/cluster/members/node4", Headers: bearer(tok),
			ExpectedStatus: http.StatusNoContent},
	})
	servers, err := leader.Stack.Node.Servers()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sv := range servers {
		ids = append(ids, sv.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"node1", "node2", "node3"}) {
		t.Fatalf("the leader's configuration after the remove: %v", ids)
	}
	n4.Stop()

	apitest.Run(t, leader, []apitest.Scenario{
		{Name: "the changes are audited, the refused one too", URL: "/api/v1/admin/audit-log?actionPrefix=cluster.members", Headers: map[string]string{
			"Authorization": "Bearer " + tok, "X-Svc-Consistency": "strong"},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"status":204`, `"status":422`, `"status":201`},
			AfterFunc: auditPage(1, 30, 3, 1, "cluster.members.delete", "cluster.members.create", "cluster.members.create")},
	})
}

// TestClusterLeadershipThroughFollowers: a leadership transfer sent to a
// follower answers once the new leader is known, naming it (id and HTTP
// address) and the previous one; without an id it picks another voter;
// impossible transfers are 4xx on any node.
func TestClusterLeadershipThroughFollowers(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	old := c.Leader(t)
	tok := c.AdminToken(t)
	fols := c.Followers(t)
	via, target := fols[0], fols[1]

	var named struct {
		Data struct {
			LeaderID       string `json:"leader_id"`
			LeaderHTTPAddr string `json:"leader_http_addr"`
			PreviousID     string `json:"previous_leader_id"`
		}
	}
	res, body := via.Do(t, "POST", "/api/v1/admin/cluster/leadership", map[string]any{"id": id(target)}, bearer(tok))
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &named) != nil {
		t.Fatalf("transfer to %s through %s: %d %s", id(target), id(via), res.StatusCode, body)
	}
	if named.Data.LeaderID != id(target) || named.Data.LeaderHTTPAddr != hostPort(target) || named.Data.PreviousID != id(old) {
		t.Errorf("transfer answer %s, want leader %s at %s, previous %s", body, id(target), hostPort(target), id(old))
	}
	if via.Stack.Node.LeaderID() != id(target) {
		t.Errorf("the node that answered names leader %q after its answer", via.Stack.Node.LeaderID())
	}
	if l := c.Leader(t); l != target {
		t.Errorf("the nodes agree on %s after a transfer to %s", id(l), id(target))
	}

	// Without an id, through the former leader (a follower now).
	res, body = old.Do(t, "POST", "/api/v1/admin/cluster/leadership", nil, bearer(tok))
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &named) != nil {
		t.Fatalf("transfer without an id through %s: %d %s", id(old), res.StatusCode, body)
	}
	next := c.Node(named.Data.LeaderID)
	if next == nil || next == target || named.Data.PreviousID != id(target) || named.Data.LeaderHTTPAddr != hostPort(next) {
		t.Fatalf("transfer without an id answered %s (previous leader %s)", body, id(target))
	}
	if l := c.Leader(t); l != next {
		t.Errorf("the nodes agree on %s, the answer named %s", id(l), id(next))
	}
	// Writes go on through every node.
	for i, s := range c.Nodes {
		if res, body := s.Do(t, "POST", "/api/v1/admin/collections", coll("after"+string(rune('a'+i)), "base", nil), bearer(tok)); res.StatusCode != http.StatusCreated {
			t.Errorf("write through %s after the transfers: %d %s", id(s), res.StatusCode, body)
		}
	}

	cur := c.Leader(t)
	other := c.Followers(t)[0]
	viewer := viewerToken(t, cur, tok)
	c.Sync(t)
	const url = "/api/v1/admin/cluster/leadership"
	apitest.Run(t, other, []apitest.Scenario{
		{Name: "to an unknown node through a follower: 404", Method: "POST", URL: url, Headers: bearer(tok),
			Body: map[string]any{"id": "nosuch"}, ExpectedStatus: http.StatusNotFound, ExpectedContent: []string{"No voting member"}},
		{Name: "to the leader itself through a follower: 422", Method: "POST", URL: url, Headers: bearer(tok),
			Body: map[string]any{"id": id(cur)}, ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"this node already leads"}},
		{Name: "a viewer may not", Method: "POST", URL: url, Headers: bearer(viewer),
			ExpectedStatus: http.StatusForbidden},
	})
	if l := c.Leader(t); l != cur {
		t.Errorf("refused transfers moved leadership from %s to %s", id(cur), id(l))
	}
}

// viewerToken creates a viewer admin through s and signs it in.
func viewerToken(t testing.TB, s *apitest.Server, owner string) string {
	t.Helper()
	res, body := s.Do(t, "POST", "/api/v1/admin/admins", map[string]any{"email": "viewer@example.com", "password": adminPassword, "role": "viewer"}, bearer(owner))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create viewer: %d %s", res.StatusCode, body)
	}
	res, body = s.Do(t, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "viewer@example.com", "password": adminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("viewer login: %d %s", res.StatusCode, body)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
}

// TestClusterMembershipNoLeader: on the last node of three, once it knows
// no leader, a membership change waits for one (5 s) and is a 409 whose
// details name the leader as far as the node knows it (none: empty
// strings); a transfer too.
func TestClusterMembershipNoLeader(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	leader := c.Leader(t)
	tok := c.AdminToken(t)
	fols := c.Followers(t)
	last := fols[1]
	fols[0].Stop()
	leader.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for last.Stack.Node.LeaderID() != "" || last.Stack.Node.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatalf("%s still names leader %q", id(last), last.Stack.Node.LeaderID())
		}
		time.Sleep(20 * time.Millisecond)
	}
	noLeader := func(t testing.TB, _ *apitest.Server, body []byte) {
		t.Helper()
		var e struct {
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatal(err)
		}
		if v, ok := e.Details["leader_id"]; !ok || v != "" {
			t.Errorf("details.leader_id %v (present %v), want \"\"", v, ok)
		}
		if v, ok := e.Details["leader_http_addr"]; !ok || v != "" {
			t.Errorf("details.leader_http_addr %v (present %v), want \"\"", v, ok)
		}
	}
	apitest.Run(t, last, []apitest.Scenario{
		{Name: "an add is a 409", Method: "POST", URL: "/api/v1/admin/cluster/members", Headers: bearer(tok),
			Body:           map[string]any{"id": "node9", "raft_addr": "127.0.0.1:1"},
			ExpectedStatus: http.StatusConflict, ExpectedContent: []string{"no leader could be reached"}, AfterFunc: noLeader},
		{Name: "a transfer too", Method: "POST", URL: "/api/v1/admin/cluster/leadership", Headers: bearer(tok),
			ExpectedStatus: http.StatusConflict, ExpectedContent: []string{"no leader could be reached"}, AfterFunc: noLeader},
	})
}
