package upgrade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// EnvVar turns the test on; make test-upgrade sets it.
const EnvVar = "SVC_UPGRADE_TEST"

// stepTimeout bounds each node's restart until it has caught up.
const stepTimeout = 60 * time.Second

// TestRollingUpgrade starts three nodes of the previous release (PREVIOUS),
// keeps three clients writing through every node, and replaces the
// nodes' binary one at a time with this work tree's: the followers first
// (each stopped with SIGTERM, started again on its data directory with the
// new binary, and waited for until it has caught up with the leader's
// commit index), then the leader (its SIGTERM hands leadership to an
// upgraded follower first). After each step every node must still run
// and every old node must still be applying (a stalled one is reported).
// Once a new binary leads it proposes its internal migrations, if it has
// any, through the log: every node must then answer /_/ready 200. At the
// end no write may have been answered anything but a success or a 503,
// the digests of the three nodes must be equal, and every acknowledged
// write must be on every node with its last acknowledged value.
func TestRollingUpgrade(t *testing.T) {
	if os.Getenv(EnvVar) != "1" {
		t.Skip("the rolling-upgrade test builds the previous release and runs a cluster for about a minute: run it with " +
			EnvVar + "=1 (make test-upgrade)")
	}
	began := time.Now()
	commit := previousCommit(t)
	oldBin := previousBinary(t, commit)
	newBin := harness.BuildBinary(t)
	t.Logf("binaries ready in %s: previous %.12s (%s), new %s", time.Since(began).Round(time.Second), commit, oldBin, newBin)

	c := harness.StartCluster(t, 3, harness.ClusterOptions{Bin: oldBin})
	leader := c.MustLeader(t, 20*time.Second)
	resp, err := c.Admin(leader).Do(context.Background(), "POST", "/api/v1/admin/collections", []byte(collection))
	if err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("create collection: %v %v", resp, err)
	}
	// A client starts writing once every node serves the collection (a
	// node that has not applied its creation yet answers 404).
	for _, nd := range c.Nodes() {
		r, err := c.Client(nd).MinIndex(resp.Index()).Do(context.Background(), "GET", "/api/v1/items?perPage=1", nil)
		if err != nil || r.Status != http.StatusOK {
			t.Fatalf("%s: the collection: %v %v", nd.Name, r, err)
		}
	}

	w := startWriters(c, 3)
	defer w.stop()
	time.Sleep(3 * time.Second)

	// Followers first, in name order, then the node that leads.
	leader = c.MustLeader(t, 20*time.Second)
	var order []*harness.Node
	for _, nd := range c.Nodes() {
		if nd != leader {
			order = append(order, nd)
		}
	}
	order = append(order, leader)
	upgraded := map[string]bool{}
	for i, nd := range order {
		step := time.Now()
		upgradeNode(t, c, nd, newBin, i == len(order)-1)
		upgraded[nd.Name] = true
		t.Logf("step %d: %s runs the new binary, caught up in %s; writes so far: %+v",
			i+1, nd.Name, time.Since(step).Round(time.Millisecond), w.snapshot())
		checkMixed(t, c, upgraded)
		time.Sleep(2 * time.Second)
	}

	// Every node runs the new binary: a new leader has proposed the
	// internal migrations this binary adds (if any), and every node has
	// applied them through the log.
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	for _, nd := range c.Nodes() {
		if err := nd.WaitReady(ctx); err != nil {
			t.Fatalf("after the upgrade: %v", err)
		}
	}
	time.Sleep(3 * time.Second)
	tl := w.stop()
	t.Logf("writes: %d creates and %d updates acknowledged; retried: %d answers 503, %d refused connections, %d requests without an answer",
		tl.creates, tl.updates, tl.unavailable, tl.refused, tl.lost)
	for _, f := range tl.failures {
		t.Errorf("write failed: %s", f)
	}
	if tl.creates == 0 || tl.updates == 0 {
		t.Fatalf("the writers wrote nothing (%d creates, %d updates)", tl.creates, tl.updates)
	}

	d, err := c.Converge(stepTimeout)
	if err != nil {
		t.Fatalf("digests: %v", err)
	}
	t.Logf("the three digests are equal at index %d (%d tables)", d.AppliedIndex, len(d.Tables))
	checkAcked(t, c, w.ackedCopy(), d.AppliedIndex)
	t.Logf("rolling upgrade from %.12s to the work tree passed in %s", commit, time.Since(began).Round(time.Second))
}

// upgradeNode stops nd with SIGTERM, starts it again with bin on the same
// data directory, flags and ports, and waits until it has caught up: its
// Raft is ready (a leader known, the log it held replayed) and the
// leader's view of it has applied the leader's commit index of the moment
// it started. last is set for the last node, which must become ready (a
// new leader migrates the cluster), not only catch up.
func upgradeNode(t *testing.T, c *harness.Cluster, nd *harness.Node, bin string, last bool) {
	t.Helper()
	c.Stop(t, nd.Name)
	nd.Bin = bin
	nd.Restart(t)
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	if last {
		if err := nd.WaitReady(ctx); err != nil {
			t.Fatalf("upgrade %s: %v", nd.Name, err)
		}
		return
	}
	var ready readiness
	for {
		var err error
		ready, err = readyOf(ctx, c, nd)
		if err == nil && ready.Raft && ready.Storage == "ok" {
			break
		}
		if !nd.Running() {
			t.Fatalf("upgrade %s: the new binary exited: %v", nd.Name, nd.ExitErr())
		}
		if ctx.Err() != nil {
			t.Fatalf("upgrade %s: not caught up within %s: %+v %v", nd.Name, stepTimeout, ready, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !ready.Migrated {
		t.Logf("upgrade %s: ready apart from migrations (the old leader has not proposed the new binary's internal migrations); it answers 503 until a new binary leads", nd.Name)
	}
	var target uint64
	for {
		l, err := c.WaitLeader(time.Until(deadlineOf(ctx)))
		if err != nil {
			t.Fatalf("upgrade %s: %v", nd.Name, err)
		}
		st, err := c.AdminState(ctx, l, false)
		if err == nil {
			if target == 0 {
				target = st.CommitIndex
			}
			if m, ok := st.Member(nd.Name); ok && m.AppliedIndex >= target {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("upgrade %s: has not applied index %d within %s (last: %+v, %v)", nd.Name, target, stepTimeout, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// readiness is the body of GET /_/ready.
type readiness struct {
	Ready    bool   `json:"ready"`
	Raft     bool   `json:"raft"`
	Migrated bool   `json:"migrated"`
	Storage  string `json:"storage"`
	Reason   string `json:"reason"`
}

func readyOf(ctx context.Context, c *harness.Cluster, nd *harness.Node) (readiness, error) {
	var r readiness
	cl := c.Client(nd)
	cl.Timeout = time.Second
	resp, err := cl.Do(ctx, "GET", "/_/ready", nil)
	if err != nil {
		return r, err
	}
	return r, resp.JSON(&r)
}

// checkMixed checks the cluster between two steps: every node runs, and a
// node of the old version that stopped applying (an entry its binary does
// not know, proposed by a new leader) is reported: it stays up and
// resumes once upgraded, which the end of the test checks.
func checkMixed(t *testing.T, c *harness.Cluster, upgraded map[string]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, nd := range c.Nodes() {
		if !nd.Running() {
			t.Fatalf("%s exited while versions were mixed: %v", nd.Name, nd.ExitErr())
		}
		r, err := readyOf(ctx, c, nd)
		if err != nil {
			t.Fatalf("%s: /_/ready: %v", nd.Name, err)
		}
		if r.Storage != "ok" {
			version := "old"
			if upgraded[nd.Name] {
				version = "new"
			}
			t.Logf("%s (%s binary) is not applying: %s: %s", nd.Name, version, r.Storage, r.Reason)
			if upgraded[nd.Name] {
				t.Errorf("%s runs the new binary and stopped applying: %s", nd.Name, r.Reason)
			}
		}
	}
}

// checkAcked reads every node's records (after it applied index) and
// checks each acknowledged write: the record is there with the seq last
// acknowledged for it.
func checkAcked(t *testing.T, c *harness.Cluster, acked map[string]int, index uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	for _, nd := range c.Nodes() {
		recs, err := harness.ListAll(ctx, c.Client(nd).MinIndex(index), "items", nil)
		if err != nil {
			t.Fatalf("%s: list: %v", nd.Name, err)
		}
		got := make(map[string]int, len(recs))
		for _, r := range recs {
			var v struct {
				Seq float64 `json:"seq"`
			}
			if err := json.Unmarshal(r.Raw, &v); err != nil {
				t.Fatalf("%s: record %s: %v", nd.Name, r.ID, err)
			}
			got[r.ID] = int(v.Seq)
		}
		var bad []string
		for id, seq := range acked {
			g, ok := got[id]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s missing (seq %d acknowledged)", id, seq))
			case g != seq:
				bad = append(bad, fmt.Sprintf("%s has seq %d, %d acknowledged last", id, g, seq))
			}
		}
		if len(bad) > 0 {
			slices.Sort(bad)
			t.Errorf("%s: %d of %d acknowledged records wrong: %s", nd.Name, len(bad), len(acked), strings.Join(bad[:min(len(bad), 20)], "; "))
			continue
		}
		t.Logf("%s: all %d acknowledged records present with their last value (%d records listed)", nd.Name, len(acked), len(recs))
	}
}
