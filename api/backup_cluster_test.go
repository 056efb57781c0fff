package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"svcd/api/apitest"
)

// TestRestoreThreeNodes: a backup taken from one follower and restored
// through the other installs on all three nodes at one log index: every
// node answers the same digest at the same applied index, holds the
// backup's data and the previous database aside, and takes writes. A node
// added afterwards replays the restore from the log: it fetches the file
// from a peer and reaches the same digest.
func TestRestoreThreeNodes(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	tok := c.AdminToken(t)
	leader, fols := c.Leader(t), c.Followers(t)
	leader.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	c.Sync(t) // a follower validates a write against its own schema
	for i := range 20 {
		createPost(t, c.Nodes[i%3], tok, fmt.Sprintf("before %d", i))
	}
	c.Sync(t)
	b := downloadBackup(t, fols[0], tok, "", nil)
	for i := range 10 {
		createPost(t, c.Nodes[i%3], tok, fmt.Sprintf("after %d", i))
	}
	res, body := upload(t, fols[1], tok, b.data, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("restore through %s: %d %s", fols[1].Stack.Node.NodeID(), res.StatusCode, body)
	}
	out := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
	idx := uint64(apitest.Int(t, out["index"]))
	sha := out["sha256"].(string)
	c.Sync(t)
	want := sameDigest(t, c.Nodes, tok)
	for _, n := range c.Nodes {
		if got := countPosts(t, n); got != 20 {
			t.Errorf("%s: %d posts after the restore, want the backup's 20", n.Stack.Node.NodeID(), got)
		}
		for _, name := range []string{sha + ".db", fmt.Sprintf("before-%d.db", idx)} {
			if _, err := os.Stat(filepath.Join(n.DataDir, "restores", name)); err != nil {
				t.Errorf("%s: %v", n.Stack.Node.NodeID(), err)
			}
		}
	}
	t.Logf("restored at index %d on 3 nodes; digest of %d tables", idx, len(want))

	// Writes through every node go on after the restore.
	for i, n := range c.Nodes {
		createPost(t, n, tok, fmt.Sprintf("after the restore %d", i))
	}
	// A fourth node replays the log from the start: the restore entry
	// makes it fetch the file from a peer.
	n4 := c.StartDetached(t, "node4")
	if res, body := leader.Do(t, "POST", "/api/v1/admin/cluster/members",
		map[string]any{"id": "node4", "raft_addr": n4.RaftAddr, "voter": true}, bearer(tok)); res.StatusCode != http.StatusCreated {
		t.Fatalf("add node4: %d %s", res.StatusCode, body)
	}
	c.WaitReady(t, n4)
	c.Sync(t)
	sameDigest(t, c.Nodes, tok)
	if _, err := os.Stat(filepath.Join(n4.DataDir, "restores", sha+".db")); err != nil {
		t.Fatalf("node4 never fetched the restore's file: %v", err)
	}
	if got := countPosts(t, n4); got != 23 {
		t.Fatalf("node4 holds %d posts, want 23", got)
	}
}

// createPost creates a post through s.
func createPost(t testing.TB, s *apitest.Server, tok, title string) {
	t.Helper()
	if res, body := s.Do(t, "POST", "/api/v1/posts", map[string]any{"title": title}, bearer(tok)); res.StatusCode != http.StatusCreated {
		t.Fatalf("create through %s: %d %s", s.Stack.Node.NodeID(), res.StatusCode, body)
	}
}

// countPosts counts the posts s holds.
func countPosts(t testing.TB, s *apitest.Server) int {
	t.Helper()
	return int(apitest.Int(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/posts?perPage=1", nil))["totalItems"]))
}

// sameDigest fails unless every node answers the same digest at the same
// applied index; it returns the digest.
func sameDigest(t testing.TB, nodes []*apitest.Server, tok string) map[string]string {
	t.Helper()
	type digest struct {
		Data struct {
			AppliedIndex uint64            `json:"applied_index"`
			Tables       map[string]string `json:"tables"`
		} `json:"data"`
	}
	var first digest
	for i, n := range nodes {
		var d digest
		if err := json.Unmarshal(must(t, n, "GET", "/api/v1/admin/cluster/digest", bearer(tok)), &d); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = d
			continue
		}
		if d.Data.AppliedIndex != first.Data.AppliedIndex || !equalMaps(d.Data.Tables, first.Data.Tables) {
			for k, v := range first.Data.Tables {
				if d.Data.Tables[k] != v {
					t.Errorf("%s differs in %s", n.Stack.Node.NodeID(), k)
				}
			}
			t.Fatalf("%s: digest at %d differs from %s's at %d", n.Stack.Node.NodeID(), d.Data.AppliedIndex,
				nodes[0].Stack.Node.NodeID(), first.Data.AppliedIndex)
		}
	}
	return first.Data.Tables
}
