package jepsen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// The repair paths of docs/operations.md, with real processes: a damaged
// entry in a stopped follower's log (the start refuses it, svcd repair
// reseed, the member rejoins and catches up), a damaged raft.db on a lone
// node (an error that says what to do, never a panic), and a damaged
// database file (svcd repair rebuild-db, rebuilt from the snapshot and the
// log).

// repairEnv makes the nodes snapshot and compact their logs often, so a
// reseeded member receives a snapshot from the leader, not the whole log.
var repairEnv = []string{
	"SVC_RAFT_SNAPSHOT_THRESHOLD=64",
	"SVC_RAFT_SNAPSHOT_INTERVAL=200ms",
	"SVC_RAFT_TRAILING_LOGS=32",
}

// ackedWriter creates records and remembers every one a node acknowledged.
type ackedWriter struct {
	t     *testing.T
	n     int
	acked map[string]int // id -> seq
	index uint64         // X-Svc-Index of the last write
}

func newAckedWriter(t *testing.T) *ackedWriter {
	return &ackedWriter{t: t, acked: map[string]int{}}
}

// write creates count records through c.
func (w *ackedWriter) write(c *harness.Client, count int) {
	w.t.Helper()
	for range count {
		w.create(c, fmt.Sprintf("rseq%011d", w.n), "repair")
	}
}

// create creates one record with id and writer and returns its index.
func (w *ackedWriter) create(c *harness.Client, id, writer string) uint64 {
	w.t.Helper()
	w.n++
	resp, err := c.Do(context.Background(), "POST", "/api/v1/items", map[string]any{"id": id, "seq": w.n, "writer": writer})
	if err != nil {
		w.t.Fatalf("create %s: %v", id, err)
	}
	if resp.Status != http.StatusCreated {
		w.t.Fatalf("create %s: %s", id, resp)
	}
	w.acked[id] = w.n
	w.index = max(w.index, resp.Index())
	return resp.Index()
}

// checkAll checks that every acknowledged record is on nd, read locally
// with the last write's index as X-Svc-Min-Index.
func (w *ackedWriter) checkAll(c *harness.Cluster, nd *harness.Node) {
	w.t.Helper()
	w.checkLocal(c.Client(nd).WithHeader("X-Svc-Consistency", "local").MinIndex(w.index), nd)
}

// checkAllNow checks the same without X-Svc-Min-Index: what nd answers as
// soon as it says it is ready.
func (w *ackedWriter) checkAllNow(c *harness.Cluster, nd *harness.Node) {
	w.t.Helper()
	w.checkLocal(c.Client(nd).WithHeader("X-Svc-Consistency", "local"), nd)
}

func (w *ackedWriter) checkLocal(cl *harness.Client, nd *harness.Node) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs, err := harness.ListAll(ctx, cl, "items", url.Values{"sort": {"id"}})
	if err != nil {
		w.t.Fatalf("%s: list: %v", nd.Name, err)
	}
	have := map[string]bool{}
	for _, r := range recs {
		have[r.ID] = true
	}
	var missing []string
	for id := range w.acked {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		w.t.Fatalf("%s: %d acknowledged records missing, first %s", nd.Name, len(missing), missing[0])
	}
	w.t.Logf("%s: all %d acknowledged records present", nd.Name, len(w.acked))
}

// lastStart is the node's log since its latest start.
func lastStart(t *testing.T, nd *harness.Node) string {
	t.Helper()
	b, err := nd.ReadLog()
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndex(b, []byte("=== harness: start #")); i >= 0 {
		b = b[i:]
	}
	return string(b)
}

// expectStartFails starts the stopped node and waits until it exits on
// its own: it must fail (status 1, not a panic's 2) with a log naming
// every string of want.
func expectStartFails(t *testing.T, nd *harness.Node, want ...string) string {
	t.Helper()
	nd.Restart(t)
	deadline := time.Now().Add(30 * time.Second)
	for nd.Running() {
		if time.Now().After(deadline) {
			t.Fatalf("%s started on damaged files and still runs after 30 s", nd.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := lastStart(t, nd)
	if err := nd.ExitErr(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("%s: exit %v, want status 1; log:\n%s", nd.Name, err, out)
	}
	if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
		t.Fatalf("%s panicked:\n%s", nd.Name, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("%s: the start error does not say %q:\n%s", nd.Name, w, out)
		}
	}
	t.Logf("%s refused to start: %s", nd.Name, strings.TrimSpace(out[strings.LastIndex(out, "svcd: "):]))
	return out
}

// repair runs `svcd repair args...` for the stopped node; it must end with
// status wantOK.
func repair(t *testing.T, nd *harness.Node, wantOK bool, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := nd.Command(ctx, append([]string{"repair"}, args...)...)
	if (err == nil) != wantOK {
		t.Fatalf("svcd repair %s: %v, want success %v:\n%s", strings.Join(args, " "), err, wantOK, out)
	}
	t.Logf("svcd repair %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// damageAll changes the byte at offset within every occurrence of needle
// in the file (the live entry, and the stale copies bbolt leaves in free
// pages), and returns how many it changed.
func damageAll(t *testing.T, path string, needle []byte, offset int, to byte) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; ; {
		j := bytes.Index(b[i:], needle)
		if j < 0 {
			break
		}
		b[i+j+offset] = to
		i += j + 1
		n++
	}
	if n == 0 {
		t.Fatalf("%q is not in %s", needle, path)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRepairReseedDamagedFollower: one changed letter inside a record's
// entry in a stopped follower's raft.db: the follower refuses to start at
// that entry (it never applies it: the record never changes on it); `svcd
// repair reseed` moves its state aside; restarted, it asks to be removed
// and added back, receives a snapshot from the leader, and ends with the
// digest of the others and every acknowledged write, the record unchanged.
// Then the node that formed the cluster (started with --bootstrap) is
// reseeded: it rejoins, it does not form a second cluster.
func TestRepairReseedDamagedFollower(t *testing.T) {
	skipShort(t)
	c := harness.StartCluster(t, 3, harness.ClusterOptions{Env: repairEnv})
	leader := c.Leader()
	if leader == nil {
		t.Fatal("no leader")
	}
	createItems(t, c.Admin(leader))
	w := newAckedWriter(t)
	w.write(c.Client(leader), 150)

	var victim *harness.Node
	for _, id := range []string{"n2", "n3"} {
		if id != leader.Name {
			victim = c.Node(id)
			break
		}
	}
	canaryValue := fmt.Sprintf("canary-value-%012x", rand.Uint64()&0xffffffffffff)
	canaryIdx := w.create(c.Client(leader), "canary000000001", canaryValue)
	w.write(c.Client(leader), 3)
	readCanary := func() string {
		t.Helper()
		resp := mustDo(t, c.Client(victim).WithHeader("X-Svc-Consistency", "local").MinIndex(canaryIdx),
			"GET", "/api/v1/items/canary000000001", nil, http.StatusOK)
		var rec struct {
			Data struct {
				Writer string `json:"writer"`
			} `json:"data"`
		}
		if err := json.Unmarshal(resp.Body, &rec); err != nil {
			t.Fatal(err)
		}
		return rec.Data.Writer
	}
	if got := readCanary(); got != canaryValue {
		t.Fatalf("%s reads the canary as %q, want %q", victim.Name, got, canaryValue)
	}

	c.Stop(t, victim.Name)
	logPath := filepath.Join(victim.DataDir(), "raft", "raft.db")
	n := damageAll(t, logPath, []byte(canaryValue), len("canary-valu"), 'E')
	t.Logf("changed one letter of the canary's value in %d place(s) of %s (entry %d)", n, logPath, canaryIdx)
	expectStartFails(t, victim, logPath, fmt.Sprintf("damaged at log entry %d", canaryIdx),
		"checksum", "svcd repair reseed --dir "+victim.DataDir())

	// The cluster keeps writing without it.
	w.write(c.Client(leader), 100)
	out := repair(t, victim, true, "reseed")
	if !strings.Contains(out, "raft/raft.db") || !strings.Contains(out, "data.db") {
		t.Fatalf("reseed did not move the Raft log and the database aside:\n%s", out)
	}
	// The leader compacted its log behind a snapshot: the member can only
	// catch up through one. Raft takes it on its own schedule (every
	// 200-400 ms here), so wait for it rather than expect it already.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		snaps := snapshots(t, leader.DataDir())
		if len(snaps) > 0 && snaps[len(snaps)-1].Index >= 2*snapThreshold {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader has no snapshot past entry %d after 15 s: %+v", 2*snapThreshold, snaps)
		}
	}
	c.Restart(t, victim.Name)
	if log := lastStart(t, victim); !strings.Contains(log, "rejoining the cluster after a reseed") {
		t.Fatalf("%s did not rejoin through a reseed join:\n%s", victim.Name, log)
	}
	// Ready means caught up: a reseeded member holds nothing of its own, so
	// it must not answer local reads before it has applied what the
	// cluster had committed when it rejoined (cluster/catchup.go).
	w.checkAllNow(c, victim)
	w.write(c.Client(victim), 20) // through the reseeded member
	d, err := c.Converge(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("every node's digest equal at index %d", d.AppliedIndex)
	for _, nd := range c.Nodes() {
		w.checkAll(c, nd)
	}
	if got := readCanary(); got != canaryValue {
		t.Fatalf("%s reads the canary as %q after the repair, want %q", victim.Name, got, canaryValue)
	}
	st, err := c.AdminState(context.Background(), leader, true)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := st.Member(victim.Name); !ok || m.Suffrage != "voter" {
		t.Fatalf("%s after the reseed: %+v (member %v), want a voter", victim.Name, m, ok)
	}

	// A later start finds Raft state and drops the marker.
	c.Stop(t, victim.Name)
	c.Restart(t, victim.Name)
	if _, err := os.Stat(filepath.Join(victim.DataDir(), "raft", "reseed.json")); !os.IsNotExist(err) {
		t.Fatalf("the reseed marker is still there after a start with Raft state: %v", err)
	}

	// The node that formed the cluster (--bootstrap, no --join) reseeded:
	// it rejoins through the URLs given to the repair and does not form a
	// cluster of its own.
	n1 := c.Node("n1")
	c.Stop(t, n1.Name)
	repair(t, n1, true, "reseed", "--join", c.Node("n2").URL()+","+c.Node("n3").URL())
	c.Restart(t, n1.Name)
	if log := lastStart(t, n1); !strings.Contains(log, "rejoining the cluster after a reseed") {
		t.Fatalf("n1 did not rejoin through a reseed join:\n%s", log)
	}
	w.write(c.Client(n1), 10)
	if _, err := c.Converge(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, nd := range c.Nodes() {
		w.checkAll(c, nd)
	}
	st, err = c.AdminState(context.Background(), n1, true)
	if err != nil {
		t.Fatal(err)
	}
	if ids := st.MemberIDs(); len(ids) != 3 {
		t.Fatalf("n1 after its reseed sees members %v, want n1, n2, n3", ids)
	}
}

// TestRepairDamagedLogLoneNode: random bytes in a lone node's raft.db and
// damaged bbolt meta pages make the start fail with an error that names
// the file and says what to do (never a panic, never "is another svcd
// using it?"); svcd repair verify reports it; svcd repair reseed refuses a
// lone node, intact or damaged.
func TestRepairDamagedLogLoneNode(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	node := &harness.Node{Name: "solo"}
	node.Start(t, dir)
	waitReady(t, node)
	admin := node.Client().WithToken(node.Setup(t))
	createItems(t, admin)
	w := newAckedWriter(t)
	w.write(admin, 60)
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "raft", "raft.db")
	clean, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	out := repair(t, node, true, "verify")
	if !strings.Contains(out, "everything checked is intact") {
		t.Fatalf("verify on intact files:\n%s", out)
	}
	out = repair(t, node, false, "reseed")
	if !strings.Contains(out, "single-node") || !strings.Contains(out, "backup") {
		t.Fatalf("reseed of a lone node:\n%s", out)
	}

	damaged := append([]byte(nil), clean...)
	r := rand.New(rand.NewPCG(14, 3))
	for range 1000 {
		damaged[r.IntN(len(damaged))] = byte(r.UintN(256))
	}
	if err := os.WriteFile(logPath, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	expectStartFails(t, node, logPath+" is damaged", "restore the data directory from a backup")
	out = repair(t, node, false, "verify")
	if !strings.Contains(out, "DAMAGED") || !strings.Contains(out, logPath) {
		t.Fatalf("verify on a damaged log:\n%s", out)
	}
	out = repair(t, node, false, "reseed")
	if !strings.Contains(out, "backup") {
		t.Fatalf("reseed of a lone node whose log no longer tells its membership:\n%s", out)
	}

	// One changed byte in each bbolt meta page.
	damaged = append(damaged[:0], clean...)
	page := os.Getpagesize()
	damaged[16+20] ^= 0x55
	damaged[page+16+20] ^= 0x55
	if err := os.WriteFile(logPath, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	out = expectStartFails(t, node, logPath+" is damaged", "both meta pages")
	if strings.Contains(out, "another svcd") {
		t.Fatalf("a damaged file reported as one another process holds:\n%s", out)
	}

	// The intact file starts again, with every write.
	if err := os.WriteFile(logPath, clean, 0o600); err != nil {
		t.Fatal(err)
	}
	node.Restart(t)
	waitReady(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs, err := harness.ListAll(ctx, admin, "items", nil)
	if err != nil || len(recs) != len(w.acked) {
		t.Fatalf("after restoring the intact log: %d records (%v), want %d", len(recs), err, len(w.acked))
	}
}

// TestRepairRebuildDB: a lone node with snapshots every 64 entries; its
// database file is truncated while it is stopped: the start refuses it
// and names svcd repair rebuild-db; after the command, the next start
// rebuilds the database from the snapshot and the log, to the same digest.
func TestRepairRebuildDB(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	node := &harness.Node{Name: "solo"}
	node.Start(t, dir, snapEnv...)
	waitReady(t, node)
	tok := node.Setup(t)
	admin := node.Client().WithToken(tok)
	createItems(t, admin)
	w := newAckedWriter(t)
	w.write(admin, 300)
	snap := settledSnapshot(t, dir, w.index)
	w.write(admin, 10) // a tail after the snapshot, replayed from the log
	before := digestOf(t, node, tok, w.index)
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "data.db")
	fi, err := os.Stat(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(dbPath, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	expectStartFails(t, node, dbPath, "svcd repair rebuild-db --dir "+dir)
	out := repair(t, node, true, "rebuild-db")
	if !strings.Contains(out, fmt.Sprintf("the snapshot of entry %d", snap.Index)) {
		t.Fatalf("rebuild-db does not name the snapshot of entry %d:\n%s", snap.Index, out)
	}
	node.Restart(t)
	waitReady(t, node)
	after := digestOf(t, node, tok, w.index)
	if !before.Equal(after) {
		t.Fatalf("digest after the rebuild differs: %s", before.Diff(after))
	}
	t.Logf("rebuilt from the snapshot of entry %d and the log: digest equal at index %d", snap.Index, after.AppliedIndex)
	repair(t, node, false, "verify") // refused: the node runs
}

// digestOf is the node's digest once it has applied idx.
func digestOf(t *testing.T, nd *harness.Node, tok string, idx uint64) harness.Digest {
	t.Helper()
	var out struct {
		Data harness.Digest `json:"data"`
	}
	resp := mustDo(t, nd.Client().WithToken(tok).MinIndex(idx), "GET", "/api/v1/admin/cluster/digest", nil, http.StatusOK)
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}
