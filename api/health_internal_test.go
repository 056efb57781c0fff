package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"svcd/cluster"
)

// fakeNode answers the probes; any other method panics (nil interface).
type fakeNode struct {
	Node
	id, state, leader string
	ready             bool
	storage           cluster.StorageStatus
}

func (n fakeNode) NodeID() string   { return n.id }
func (n fakeNode) State() string    { return n.state }
func (n fakeNode) LeaderID() string { return n.leader }
func (n fakeNode) Ready() bool      { return n.ready }
func (n fakeNode) CaughtUp() bool   { return n.ready }
func (n fakeNode) Storage() cluster.StorageStatus {
	return n.storage
}

// fakeEngine answers Migrated and Setting; any other settings method
// panics (nil interface).
type fakeEngine struct {
	SettingStore
	migrated bool
}

func (e fakeEngine) Migrated() bool { return e.migrated }

// Setting answers the defaults' empty values (the CORS middleware reads
// cors.* on every request).
func (e fakeEngine) Setting(string) string { return "" }

// TestReadyStates: /_/ready is 503 with Retry-After until the node has
// caught up and is migrated, and while its disk is full or its state
// machine stopped (with the reason); /_/cluster says unhealthy meanwhile,
// /_/health says which condition.
func TestReadyStates(t *testing.T) {
	full := cluster.StorageStatus{FreeBytes: 1 << 20, MinFreeBytes: 256 << 20, DiskFull: true}
	stalled := cluster.StorageStatus{FreeBytes: 1 << 30, MinFreeBytes: 256 << 20, Stalled: true, StallIndex: 7, StallReason: "stopped at entry 7: damaged"}
	cases := []struct {
		raft, migrated bool
		storage        cluster.StorageStatus
		status         int
		reason, health string
	}{
		{false, false, cluster.StorageStatus{}, 503, "", "ok"},
		{true, false, cluster.StorageStatus{}, 503, "", "ok"},
		{false, true, cluster.StorageStatus{}, 503, "", "ok"},
		{true, true, cluster.StorageStatus{}, 200, "", "ok"},
		{true, true, full, 503, "disk full", "disk full"},
		{true, true, stalled, 503, "stopped at entry 7", "stalled"},
	}
	for _, c := range cases {
		s := New(Options{
			Migrations: fakeEngine{migrated: c.migrated},
			Settings:   fakeEngine{migrated: c.migrated},
			Node:       fakeNode{id: "n1", state: "Follower", leader: "n2", ready: c.raft, storage: c.storage},
			Logger:     testServer().log,
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
		if reason, _ := body["reason"].(string); !strings.Contains(reason, c.reason) || (c.reason == "") != (reason == "") {
			t.Errorf("%+v: reason %q, want %q", c.storage, reason, c.reason)
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

		rec = httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_/health", nil))
		body = nil
		json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != 200 || body["status"] != c.health {
			t.Errorf("health: %d %s, want status %q", rec.Code, rec.Body, c.health)
		}
	}
}

// TestDataRoutesWaitForReplay: until the replica has replayed its log and
// migrated, every /api route answers 503 with Retry-After (a read could
// otherwise miss writes acknowledged before a restart); probes still answer.
func TestDataRoutesWaitForReplay(t *testing.T) {
	s := New(Options{
		Migrations: fakeEngine{migrated: true},
		Settings:   fakeEngine{migrated: true},
		Node:       fakeNode{id: "n1", state: "Leader", leader: "n1", ready: false},
		Logger:     testServer().log,
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
