package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/cluster"
)

// TestJoinOnce: a join signed with the cluster key is accepted once by the
// node it was signed for. The same request sent again (a replay of a
// captured join) is a 409; a join signed for another member, or the
// version 1 signature that names no member, is a 403; a new signature of
// the same body (the joining node's retry) is accepted.
func TestJoinOnce(t *testing.T) {
	t.Parallel()
	const key = "test-cluster-key"
	s := apitest.Start(t, apitest.Options{ClusterKey: key})
	// The node joins itself again: a no-op for Raft, a full join for HTTP.
	st := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/cluster", nil)["data"])
	self := apitest.Obj(t, apitest.List(t, st["members"])[0])
	id := self["id"].(string)
	body, err := json.Marshal(cluster.JoinRequest{ID: id, Addr: self["raft_addr"].(string), Voter: true})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(key, target string) map[string]string {
		h, err := cluster.SignJoin(key, target, time.Now(), body)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{cluster.JoinAuthHeader: h, "Content-Type": "application/json"}
	}
	captured := sign(key, id)
	unsealed := func(t testing.TB, _ *apitest.Server, b []byte) {
		var out struct {
			Secrets []byte `json:"secrets"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if sec, err := cluster.Unseal(key, out.Secrets); err != nil || len(sec) == 0 {
			t.Errorf("secrets do not unseal: %v", err)
		}
	}
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "the node names itself", URL: "/_/join", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"node_id":"` + id + `"`, `"join_auth":2`},
		},
		{
			Name: "a signed join is accepted", Method: http.MethodPost, URL: "/_/join", Body: string(body), Headers: captured,
			ExpectedStatus: http.StatusOK, AfterFunc: unsealed,
		},
		{
			Name: "the same join again is a replay", Method: http.MethodPost, URL: "/_/join", Body: string(body), Headers: captured,
			ExpectedStatus: http.StatusConflict, ExpectedContent: []string{"already used"}, NotExpectedContent: []string{"secrets"},
		},
		{
			Name: "a join signed for another member", Method: http.MethodPost, URL: "/_/join", Body: string(body),
			Headers: sign(key, "some-other-node"), ExpectedStatus: http.StatusForbidden,
			ExpectedContent: []string{"signed for another node, not for " + id},
		},
		{
			Name: "the version 1 signature names no member", Method: http.MethodPost, URL: "/_/join", Body: string(body),
			Headers:        map[string]string{cluster.JoinAuthHeader: cluster.SignJoinV1(key, time.Now(), body)},
			ExpectedStatus: http.StatusForbidden, ExpectedContent: []string{"upgrade the joining node"},
		},
		{
			Name: "a join signed with another key", Method: http.MethodPost, URL: "/_/join", Body: string(body),
			Headers: sign("another-key", id), ExpectedStatus: http.StatusForbidden,
			ExpectedContent: []string{"not signed with the cluster key"},
		},
		{
			Name: "the joining node's retry is a new signature", Method: http.MethodPost, URL: "/_/join", Body: string(body),
			Headers: sign(key, id), ExpectedStatus: http.StatusOK, AfterFunc: unsealed,
		},
	})
}
