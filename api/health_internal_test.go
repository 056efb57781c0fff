package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fakeNode answers the probes; any other method panics (nil interface).
type fakeNode struct {
	Node
	id, state, leader string
	ready             bool
}

func (n fakeNode) NodeID() string   { return n.id }
func (n fakeNode) State() string    { return n.state }
func (n fakeNode) LeaderID() string { return n.leader }
func (n fakeNode) Ready() bool      { return n.ready }
func (n fakeNode) CaughtUp() bool   { return n.ready }

// fakeEngine answers Migrated; any other method panics (nil interface).
type fakeEngine struct {
	Engine
	migrated bool
}

func (e fakeEngine) Migrated() bool { return e.migrated }

// Setting answers the defaults' empty values (the CORS middleware reads
// cors.* on every request).
func (e fakeEngine) Setting(string) string { return "" }

// TestReadyStates: /_/ready is 503 with Retry-After until the node has
// caught up and is migrated; /_/cluster says unhealthy meanwhile.
func TestReadyStates(t *testing.T) {
	cases := []struct {
		raft, migrated bool
		status         int
	}{
		{false, false, 503},
		{true, false, 503},
		{false, true, 503},
		{true, true, 200},
	}
	for _, c := range cases {
		s := New(Options{
			Engine: fakeEngine{migrated: c.migrated},
			Node:   fakeNode{id: "n1", state: "Follower", leader: "n2", ready: c.raft},
			Logger: testServer().log,
		})
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_/ready", nil))
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if rec.Code != c.status || body["ready"] != (c.status == 200) || body["raft"] != c.raft || body["migrated"] != c.migrated {
			t.Errorf("raft %v migrated %v: %d %s", c.raft, c.migrated, rec.Code, rec.Body)
		}
		if (rec.Header().Get("Retry-After") == "1") != (c.status == 503) {
			t.Errorf("raft %v migrated %v: Retry-After %q", c.raft, c.migrated, rec.Header().Get("Retry-After"))
		}
		if rec.Header().Get("X-Svc-Node") != "n1" {
			t.Errorf("no X-Svc-Node on /_/ready")
		}

		rec = httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_/cluster", nil))
		body = nil
		json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != 200 || body["healthy"] != (c.status == 200) || body["leader_id"] != "n2" || body["state"] != "Follower" || body["node_id"] != "n1" {
			t.Errorf("cluster summary: %d %s", rec.Code, rec.Body)
		}
	}
}

// TestDataRoutesWaitForReplay: until the replica has replayed its log and
// migrated, every /api route answers 503 with Retry-After (a read could
// otherwise miss writes acknowledged before a restart); probes still answer.
func TestDataRoutesWaitForReplay(t *testing.T) {
	s := New(Options{
		Engine: fakeEngine{migrated: true},
		Node:   fakeNode{id: "n1", state: "Leader", leader: "n1", ready: false},
		Logger: testServer().log,
	})
	for _, path := range []string{"/api/v1/posts", "/api/v1/posts/abc", "/api/v1/admin/collections", "/api/v1/admin/auth/login", "/api/collections/posts/records"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("GET %s while replaying: %d %q %s", path, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_/health", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/_/health while replaying: %d", rec.Code)
	}
}
