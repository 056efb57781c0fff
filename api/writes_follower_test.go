package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// TestWritesThroughAFollowerThatIsBehind: a client creates a collection
// through the leader and writes into it at once through a follower, with
// none of svcd's consistency headers: the follower, which may not have
// applied the collection yet, catches up and accepts the write instead of
// answering 404; an update through the other follower with the create's
// ETag is accepted instead of answering 412 or 404.
func TestWritesThroughAFollowerThatIsBehind(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	tok := c.AdminToken(t)
	leader := c.Leader(t)
	followers := c.Followers(t)
	auth := map[string]string{"Authorization": "Bearer " + tok}
	for i := range 12 {
		name := fmt.Sprintf("notes%d", i)
		leader.CreateCollection(t, public(coll(name, "base", []map[string]any{f("title", "text")})))
		n := followers[i%len(followers)]
		res, body := n.Do(t, http.MethodPost, "/api/v1/"+name, map[string]any{"title": "first"}, auth)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("create in %s through %s right after the collection: %d %s", name, n.Stack.Node.NodeID(), res.StatusCode, body)
		}
		id := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["id"].(string)
		m := followers[(i+1)%len(followers)]
		h := map[string]string{"Authorization": "Bearer " + tok, "If-Match": res.Header.Get("ETag")}
		res, body = m.Do(t, http.MethodPatch, "/api/v1/"+name+"/"+id, map[string]any{"title": "second"}, h)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("update of %s/%s through %s right after the create: %d %s", name, id, m.Stack.Node.NodeID(), res.StatusCode, body)
		}
	}
	// A refusal that is not about being behind stays a refusal.
	res, body := followers[0].Do(t, http.MethodPost, "/api/v1/nothing-here", map[string]any{"title": "x"}, auth)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("a write into a collection that does not exist: %d %s", res.StatusCode, body)
	}
}
