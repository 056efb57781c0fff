package api_test

import (
	"fmt"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestScriptsCluster: on three nodes, hooks and routes saved through one
// follower run for requests to another: they replicate through the log
// and every node's cache follows its commands. A before-hook runs on the
// node that took the write, once; an after-hook too, once, however many
// nodes apply the write.
func TestScriptsCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	admin := bearer(c.AdminToken(t))
	fl := c.Followers(t)
	a, b, leader := fl[0], fl[1], c.Leader(t)
	data(t, leader, 201, "POST", collectionsURL, public(coll("posts", "base", []map[string]any{f("title", "text"), f("node", "text")})), admin)
	data(t, leader, 201, "POST", collectionsURL, public(coll("logs", "base", []map[string]any{f("msg", "text"), f("node", "text")})), admin)
	hook := data(t, a, 201, "POST", hooksURL, map[string]any{"collection": "posts", "event": "beforeCreate",
		"code": `record.node = helpers.os.nodeId(); record.title = record.title + " (v1)"`}, admin)["id"].(string)
	data(t, a, 201, "POST", hooksURL, map[string]any{"collection": "posts", "event": "afterCreate",
		"code": `helpers.records.create("logs", {msg: "after " + record.id, node: helpers.os.nodeId()})`}, admin)
	data(t, a, 201, "POST", routesURL, map[string]any{"method": "GET", "path": "where",
		"code": `return {node: helpers.os.nodeId(), posts: helpers.query("posts").totalItems}`}, admin)
	c.Sync(t)

	post := data(t, b, 201, "POST", "/api/v1/posts", map[string]any{"title": "t"}, nil)
	if post["title"] != "t (v1)" || post["node"] != b.Stack.Node.NodeID() {
		t.Errorf("a write through %s: %v", b.Stack.Node.NodeID(), post)
	}
	deadline := time.Now().Add(10 * time.Second)
	var logs []any
	for {
		c.Sync(t)
		logs = listOn(t, leader, "logs")
		if len(logs) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a second run would have written by now
	c.Sync(t)
	logs = listOn(t, leader, "logs")
	if len(logs) != 1 || apitest.Obj(t, logs[0])["node"] != b.Stack.Node.NodeID() {
		t.Errorf("after-hook runs: %v, want one on %s", logs, b.Stack.Node.NodeID())
	}

	// Every node serves the route, as its own replica.
	for _, s := range c.Nodes {
		st, v, _ := call(t, s, "GET", "where", nil, nil)
		got := apitest.Obj(t, v)
		if st != 200 || got["node"] != s.Stack.Node.NodeID() || fmt.Sprint(got["posts"]) != "1" {
			t.Errorf("the route on %s: %d %v", s.Stack.Node.NodeID(), st, v)
		}
	}

	// A change through the leader reaches every node's cache.
	data(t, leader, 200, "PATCH", hooksURL+"/"+hook, map[string]any{"code": `record.title = record.title + " (v2)"`}, admin)
	c.Sync(t)
	for _, s := range []*apitest.Server{a, b} {
		if got := data(t, s, 201, "POST", "/api/v1/posts", map[string]any{"title": "u"}, nil); got["title"] != "u (v2)" {
			t.Errorf("after the change, a write through %s: %v", s.Stack.Node.NodeID(), got)
		}
	}
}

// listOn lists coll on node s, anonymously.
func listOn(t testing.TB, s *apitest.Server, coll string) []any {
	t.Helper()
	res, body := s.Do(t, "GET", "/api/v1/"+coll+"?perPage=500", nil, nil)
	if res.StatusCode != 200 {
		t.Fatalf("list %s: %d %s", coll, res.StatusCode, body)
	}
	return apitest.List(t, apitest.DecodeMap(t, body)["data"])
}
