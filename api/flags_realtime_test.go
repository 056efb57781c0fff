package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"svcd/api/apitest"
)

// flagMsg sums a __flags message up as "kind op key".
func flagMsg(t testing.TB, m map[string]any) string {
	t.Helper()
	if m["type"] != "flags" || m["eventId"] == nil {
		t.Fatalf("not a flags message: %v", m)
	}
	return fmt.Sprintf("%s %s %s", m["kind"], m["op"], m["key"])
}

// TestFlagsRealtime: on one node with its real hub, a __flags subscriber
// (anonymous: the messages name what changed, not how) sees every flag
// and segment change in log order, and nothing for a refused write or
// for record changes.
func TestFlagsRealtime(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	w := dialWS(t, s, "", nil)
	if m := w.ask(map[string]any{"type": "subscribe", "topics": []string{"__flags"}}); m["type"] != "subscribed" {
		t.Fatalf("subscribe: %v", m)
	}
	admin := s.AdminHeaders(t, nil)
	putFlag(t, s, map[string]any{"key": "beta"})
	putFlag(t, s, map[string]any{"key": "beta", "enabled": false})
	data(t, s, 200, "PATCH", flagsURL+"/beta", map[string]any{"enabled": true}, admin)
	data(t, s, 422, "POST", flagsURL, map[string]any{"key": "x", "rules": []any{map[string]any{"when": map[string]any{"segment": "ghost"}, "variation": "on"}}}, admin)
	s.CreateRecord(t, "posts", map[string]any{"title": "not a flag"})
	putSegment(t, s, "staff", test("email", "ends_with", "@corp.example"))
	data(t, s, 200, "PATCH", segmentsURL+"/staff", map[string]any{"conditions": test("staff", "eq", true)}, admin)
	if res, body := s.Do(t, "DELETE", segmentsURL+"/staff", nil, admin); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete segment: %d %s", res.StatusCode, body)
	}
	if res, body := s.Do(t, "DELETE", flagsURL+"/beta", nil, admin); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete flag: %d %s", res.StatusCode, body)
	}
	want := []string{"flag create beta", "flag update beta", "flag update beta", "segment create staff", "segment update staff", "segment delete staff", "flag delete beta"}
	var last uint64
	for i, wm := range want {
		m := w.read()
		if got := flagMsg(t, m); got != wm {
			t.Fatalf("message %d: %q, want %q", i, got, wm)
		}
		id, err := strconv.ParseUint(m["eventId"].(string), 10, 64)
		if err != nil || id <= last {
			t.Fatalf("message %d: eventId %v after %d", i, m["eventId"], last)
		}
		last = id
	}
	w.quiet()
}

// TestFlagsCluster: on three nodes, a flag written through one follower
// is published on __flags to a subscriber of the other follower and of
// the leader, and every node evaluates it the same, locally; a read with
// X-Svc-Min-Index on another node sees the write at once.
func TestFlagsCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	admin := bearer(c.AdminToken(t))
	fl := c.Followers(t)
	a, b, leader := fl[0], fl[1], c.Leader(t)
	subs := map[string]*wsClient{}
	for _, n := range []*apitest.Server{b, leader} {
		w := dialWS(t, n, "", nil)
		if m := w.ask(map[string]any{"type": "subscribe", "topics": []string{"__flags"}}); m["type"] != "subscribed" {
			t.Fatalf("subscribe on %s: %v", n.Stack.Node.NodeID(), m)
		}
		subs[n.Stack.Node.NodeID()] = w
	}
	putSegment(t, a, "eu", test("country", "in", []any{"FR", "DE"}))
	res, body := a.Do(t, "POST", flagsURL, map[string]any{"key": "eu-launch", "rules": []any{
		map[string]any{"when": map[string]any{"segment": "eu"}, "variation": "on"},
		map[string]any{"rollout": map[string]any{"value": 50}, "variation": "on"},
	}}, admin)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create through follower %s: %d %s", a.Stack.Node.NodeID(), res.StatusCode, body)
	}
	idx := res.Header.Get("X-Svc-Index")
	// Read-your-write on another node, at once.
	got := data(t, b, 200, "POST", evaluateURL, map[string]any{"context": map[string]any{"country": "FR"}}, map[string]string{"X-Svc-Min-Index": idx})
	if got["eu-launch"] != true {
		t.Fatalf("%s with X-Svc-Min-Index %s: %v", b.Stack.Node.NodeID(), idx, got)
	}
	for id, w := range subs {
		w.t = t
		if got := []string{flagMsg(t, w.read()), flagMsg(t, w.read())}; got[0] != "segment create eu" || got[1] != "flag create eu-launch" {
			t.Errorf("subscriber on %s: %v", id, got)
		}
	}
	c.Sync(t)
	for i := range 20 {
		ctx := map[string]any{"id": fmt.Sprintf("u%d", i), "country": "US"}
		var answers []any
		for _, n := range c.Nodes {
			answers = append(answers, evalFlags(t, n, ctx, "eu-launch")["eu-launch"])
		}
		if answers[0] != answers[1] || answers[1] != answers[2] {
			t.Fatalf("%v: the nodes answer %v", ctx, answers)
		}
	}
	res, body = b.Do(t, "DELETE", flagsURL+"/eu-launch", nil, admin)
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete through %s: %d %s", b.Stack.Node.NodeID(), res.StatusCode, body)
	}
	for id, w := range subs {
		if got := flagMsg(t, w.read()); got != "flag delete eu-launch" {
			t.Errorf("subscriber on %s: %v", id, got)
		}
	}
}
