package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// TestPBWritesThroughAnyNode: a PocketBase app creates a collection
// through one node and writes into it at once through another, as a load
// balancer may send it. svcd's own paths would answer 404 for a moment
// (the follower checks the write against its replica, which may not hold
// the collection yet); PocketBase's paths wait for the leader's commit
// index first (pocketbase.consistency, strong by default), so every
// write finds its collection. With "local" the same sequence is allowed
// to race: that is the setting's point.
func TestPBWritesThroughAnyNode(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	tok := c.AdminToken(t)
	leader := c.Leader(t)
	followers := c.Followers(t)
	for i := range 12 {
		name := fmt.Sprintf("notes%d", i)
		leader.CreateCollection(t, public(coll(name, "base", []map[string]any{f("title", "text")})))
		// No Sync: straight to a follower, the token bare as the SDK sends it.
		n := followers[i%len(followers)]
		res, body := n.Do(t, http.MethodPost, "/api/collections/"+name+"/records",
			map[string]any{"title": "first"}, map[string]string{"Authorization": tok})
		if res.StatusCode != http.StatusOK {
			t.Fatalf("create in %s through %s right after the collection: %d %s",
				name, n.Stack.Node.NodeID(), res.StatusCode, body)
		}
		id, _ := apitest.DecodeMap(t, body)["id"].(string)
		// And the update through the other follower, at once.
		m := followers[(i+1)%len(followers)]
		res, body = m.Do(t, http.MethodPatch, "/api/collections/"+name+"/records/"+id,
			map[string]any{"title": "second"}, map[string]string{"Authorization": tok})
		if res.StatusCode != http.StatusOK {
			t.Fatalf("update of %s/%s through %s right after the create: %d %s",
				name, id, m.Stack.Node.NodeID(), res.StatusCode, body)
		}
	}
}
