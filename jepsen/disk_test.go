package jepsen_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// Storage faults (issue 14): a node whose disk fills answers writes with
// 507 or 503 naming the disk, says so on its probes, keeps its leadership
// (or hands it over), stays up, and resumes by itself when space is freed.
// The data directories are small tmpfs mounts (root only).

// tmpfs mounts a tmpfs of size bytes at dir until the test ends.
func tmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("mounting a tmpfs needs root (CI is set, so this is a failure)")
		}
		t.Skip("mounting a tmpfs needs root")
	}
	unmount, err := harness.MountTmpfs(dir, size)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: this one after the node's kill.
	t.Cleanup(unmount)
}

// diskFiller is harness.Filler failing the test on errors.
type diskFiller struct {
	t *testing.T
	f *harness.Filler
}

func newFiller(t *testing.T, dir string) *diskFiller { return &diskFiller{t, harness.NewFiller(dir)} }

func (d *diskFiller) leave(keep int64) {
	d.t.Helper()
	if err := d.f.Leave(keep); err != nil {
		d.t.Fatal(err)
	}
}

func (d *diskFiller) free() {
	d.t.Helper()
	if err := d.f.Free(); err != nil {
		d.t.Fatal(err)
	}
}

// health reads a node's /_/health.
type healthView struct {
	Status    string `json:"status"`
	RaftState string `json:"raft_state"`
	Storage   struct {
		FreeBytes   uint64 `json:"free_bytes"`
		DiskFull    bool   `json:"disk_full"`
		Stalled     bool   `json:"stalled"`
		StallReason string `json:"stall_reason"`
	} `json:"storage"`
}

func healthOf(ctx context.Context, nd *harness.Node) (healthView, error) {
	var h healthView
	resp, err := nd.Client().Do(ctx, "GET", "/_/health", nil)
	if err != nil {
		return h, err
	}
	return h, resp.JSON(&h)
}

// waitHealth polls a node's health until ok(h) or the timeout.
func waitHealth(t *testing.T, nd *harness.Node, timeout time.Duration, what string, ok func(healthView) bool) healthView {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last healthView
	var lastErr error
	for time.Now().Before(deadline) {
		h, err := healthOf(t.Context(), nd)
		if err == nil && ok(h) {
			return h
		}
		last, lastErr = h, err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %s not reached within %s (last health %+v, err %v)", nd.Name, what, timeout, last, lastErr)
	return last
}

// termOf reads the Raft term and state the admin cluster view reports.
func termOf(t *testing.T, admin *harness.Client) (uint64, string) {
	t.Helper()
	resp, err := admin.Do(t.Context(), "GET", "/api/v1/admin/cluster", nil)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("cluster view: %v %v", resp, err)
	}
	var v struct {
		Data struct {
			Term  uint64 `json:"term"`
			State string `json:"state"`
		} `json:"data"`
	}
	if err := resp.JSON(&v); err != nil {
		t.Fatal(err)
	}
	return v.Data.Term, v.Data.State
}

// TestDiskFullSingleNode: a node whose disk has less free space than its
// floor refuses writes with 507 and Retry-After, says "disk full" on its
// probes, keeps its leadership (no failed append, so no step-down and
// re-election), stays so with the disk completely full, and takes writes
// again by itself once the space is freed. The probe of issue 14 saw a
// 500, then 503 "No leader is available", and about 124 leadership changes
// in 30 s.
func TestDiskFullSingleNode(t *testing.T) {
	skipShort(t)
	dir := filepath.Join(t.TempDir(), "n1")
	tmpfs(t, dir, 64<<20)
	node := &harness.Node{Name: "n1"}
	node.Start(t, dir, "SVC_MIN_FREE_BYTES=8388608", "SVC_LOG_LEVEL=warn")
	waitReady(t, node)
	admin := node.Client().WithToken(node.Setup(t))
	createItems(t, admin)
	write := func(seq int) *harness.Response {
		resp, err := admin.Do(t.Context(), "POST", "/api/v1/items", map[string]any{"seq": seq + 1, "writer": strings.Repeat("w", 200)})
		if err != nil {
			t.Fatalf("write %d: %v", seq, err)
		}
		return resp
	}
	for i := range 20 {
		if r := write(i); r.Status != http.StatusCreated {
			t.Fatalf("write %d: %s", i, r)
		}
	}
	term0, _ := termOf(t, admin)
	fill := newFiller(t, dir)

	for _, keep := range []int64{4 << 20, 0} {
		fill.leave(keep)
		waitHealth(t, node, 5*time.Second, "disk full", func(h healthView) bool { return h.Status == "disk full" && h.Storage.DiskFull })
		deadline := time.Now().Add(3 * time.Second)
		for seq := 1000; time.Now().Before(deadline); seq++ {
			r := write(seq)
			if r.Status != http.StatusInsufficientStorage || !strings.Contains(r.APIError().Error, "disk") || r.Header.Get("Retry-After") == "" {
				t.Fatalf("write with %d bytes left: %s (Retry-After %q), want 507 naming the disk", keep, r, r.Header.Get("Retry-After"))
			}
			time.Sleep(50 * time.Millisecond)
		}
		resp, err := node.Client().Do(t.Context(), "GET", "/_/ready", nil)
		if err != nil || resp.Status != http.StatusServiceUnavailable || !strings.Contains(string(resp.Body), "disk full") {
			t.Fatalf("/_/ready with a full disk: %v %v", resp, err)
		}
		if term, state := termOf(t, admin); term != term0 || state != "Leader" {
			t.Fatalf("with %d bytes left the node went from term %d to %d, state %s: leadership flapped", keep, term0, term, state)
		}
		// Reads go on.
		if r, err := admin.Do(t.Context(), "GET", "/api/v1/items?perPage=1", nil); err != nil || r.Status != http.StatusOK {
			t.Fatalf("read with a full disk: %v %v", r, err)
		}
	}
	fill.free()
	waitHealth(t, node, 5*time.Second, "ok", func(h healthView) bool { return h.Status == "ok" })
	if r := write(5000); r.Status != http.StatusCreated {
		t.Fatalf("write after the space was freed: %s", r)
	}
	if !node.Running() {
		t.Fatal("the node exited")
	}
}

// TestDiskFullFollowerResumes: one follower of three whose disk fills
// completely stops applying, stays up and says "disk full", while the
// cluster keeps taking writes; once the space is freed it catches up by
// itself, without a restart, and ends with every acknowledged write. The
// probe of issue 14 saw the follower exit with "FATAL: the state machine
// cannot continue".
func TestDiskFullFollowerResumes(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	tmpfs(t, filepath.Join(dir, "n3"), 48<<20)
	c := harness.StartCluster(t, 3, harness.ClusterOptions{Dir: dir, Env: []string{"SVC_MIN_FREE_BYTES=4194304", "SVC_LOG_LEVEL=warn"}})
	leader := c.MustLeader(t, leaderTimeout)
	n3 := c.Node("n3")
	if leader == n3 {
		if r, err := c.Admin(n3).Do(t.Context(), "POST", "/api/v1/admin/cluster/leadership", map[string]any{"id": "n1"}); err != nil || r.Status != http.StatusOK {
			t.Fatalf("move leadership off n3: %v %v", r, err)
		}
		leader = c.MustLeader(t, leaderTimeout)
	}
	admin := c.Admin(leader)
	createItems(t, admin)
	var acked []string
	write := func(seq int) {
		r, err := admin.Do(t.Context(), "POST", "/api/v1/items", map[string]any{"seq": seq + 1, "writer": strings.Repeat("x", 500)})
		if err != nil || r.Status != http.StatusCreated {
			t.Fatalf("write %d through the leader: %v %v", seq, r, err)
		}
		var rec struct {
			Data struct{ ID string } `json:"data"`
		}
		json.Unmarshal(r.Body, &rec)
		acked = append(acked, rec.Data.ID)
	}
	for i := range 50 {
		write(i)
	}
	fill := newFiller(t, n3.DataDir())
	fill.leave(0)
	for i := 50; i < 300; i++ {
		write(i)
	}
	h := waitHealth(t, n3, 15*time.Second, "disk full", func(h healthView) bool { return h.Status == "disk full" })
	t.Logf("n3 with a full disk: %+v", h)
	if r, err := c.Admin(n3).Do(t.Context(), "POST", "/api/v1/items", map[string]any{"seq": -1}); err != nil ||
		r.Status != http.StatusInsufficientStorage {
		t.Fatalf("a write through the full follower: %v %v, want 507", r, err)
	}
	for i := 300; i < 400; i++ {
		write(i)
	}
	if !n3.Running() {
		t.Fatal("the follower with a full disk exited")
	}
	fill.free()
	waitHealth(t, n3, 30*time.Second, "ok", func(h healthView) bool { return h.Status == "ok" })
	d, err := c.Converge(60 * time.Second)
	if err != nil {
		t.Fatalf("after the space was freed: %v", err)
	}
	t.Logf("converged: %d tables", len(d.Tables))
	recs, err := harness.ListAll(t.Context(), c.Client(n3).WithToken(c.Token).Strong(), "items", nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range recs {
		have[r.ID] = true
	}
	for _, id := range acked {
		if !have[id] {
			t.Fatalf("acknowledged write %s missing on n3", id)
		}
	}
	if !n3.Running() || n3.ExitErr() != nil {
		t.Fatalf("n3 restarted or exited: %v", n3.ExitErr())
	}
}

// TestDiskFullLeaderHandsOver: a leader whose disk falls below its floor
// hands leadership to another voter, and writes through it go on (the
// node forwards them, or refuses with 507 while it cannot take them).
func TestDiskFullLeaderHandsOver(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	tmpfs(t, filepath.Join(dir, "n1"), 48<<20)
	c := harness.StartCluster(t, 3, harness.ClusterOptions{Dir: dir, Env: []string{"SVC_MIN_FREE_BYTES=8388608", "SVC_LOG_LEVEL=warn"}})
	n1 := c.Node("n1")
	if leader := c.MustLeader(t, leaderTimeout); leader != n1 {
		if r, err := c.Admin(leader).Do(t.Context(), "POST", "/api/v1/admin/cluster/leadership", map[string]any{"id": "n1"}); err != nil || r.Status != http.StatusOK {
			t.Fatalf("move leadership to n1: %v %v", r, err)
		}
	}
	createItems(t, c.Admin(c.MustLeader(t, leaderTimeout)))
	newFiller(t, n1.DataDir()).leave(4 << 20)
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		if l := c.MustLeader(t, leaderTimeout); l != n1 {
			t.Logf("leadership moved to %s after %s", l.Name, time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader with a full disk kept its leadership")
		}
		time.Sleep(200 * time.Millisecond)
	}
	leader := c.MustLeader(t, leaderTimeout)
	for i := range 20 {
		r, err := c.Admin(leader).Do(t.Context(), "POST", "/api/v1/items", map[string]any{"seq": i + 1})
		if err != nil || r.Status != http.StatusCreated {
			t.Fatalf("write %d through the new leader: %v %v", i, r, err)
		}
	}
	if r, err := c.Admin(n1).Do(t.Context(), "POST", "/api/v1/items", map[string]any{"seq": 99}); err != nil || r.Status != http.StatusInsufficientStorage {
		t.Fatalf("a write through n1 (full disk): %v %v, want 507", r, err)
	}
}
