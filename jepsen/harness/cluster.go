package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ClusterReadyTimeout bounds the start (or restart) of one cluster node
// until GET /_/ready answers 200.
const ClusterReadyTimeout = 30 * time.Second

// ClusterOptions configures StartCluster.
type ClusterOptions struct {
	// Key is SVC_CLUSTER_KEY for every node; empty means a random key.
	Key string
	// Env is extra KEY=VALUE environment for every node (snapshot tuning,
	// for example).
	Env []string
	// Bin is the svcd binary; empty means BuildBinary.
	Bin string
	// Dir holds one data directory per node; empty means t.TempDir().
	Dir string
	// NoGossip starts the nodes without --gossip-addr (no memberlist ring;
	// liveness then comes from the status RPC alone).
	NoGossip bool
	// NodeEnv adds KEY=VALUE environment for single nodes, by node id.
	NodeEnv map[string][]string
	// Netns runs every node in its own network namespace (Network), so
	// tests can cut, slow and lose traffic between nodes. Needs root.
	Netns bool
	// Tmpfs, when set, gives every node a data directory on a tmpfs of
	// that many bytes, so a test can fill its disk (Filler). Needs root.
	Tmpfs int64
}

// Cluster is N svcd processes forming one Raft cluster on loopback: n1
// bootstraps it, the others join through n1; each has its own HTTP, Raft
// and gossip port. Node ids are the node names "n1".."nN". Every process
// is killed when the test ends.
type Cluster struct {
	// Key is the cluster key every member shares.
	Key string
	// Token is an owner admin's bearer token, valid on every node.
	Token string

	opts ClusterOptions
	dir  string
	net  *Network // nil without Netns

	mu      sync.Mutex
	nodes   []*Node
	raft    map[string]string // node id -> raft address
	clients map[*Node]*Client // one connection pool per node
}

// StartCluster starts n nodes (n1 with --bootstrap, the others with --join
// through n1), waits until every one is ready, creates the first admin and
// waits until its token is accepted on every node. It fails the test when
// the cluster does not form.
func StartCluster(t testing.TB, n int, opts ClusterOptions) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("cluster: %d nodes", n)
	}
	c := &Cluster{Key: opts.Key, opts: opts, dir: opts.Dir, raft: map[string]string{}, clients: map[*Node]*Client{}}
	if c.Key == "" {
		b := make([]byte, 16)
		rand.Read(b)
		c.Key = "jepsen-" + hex.EncodeToString(b)
	}
	if c.dir == "" {
		c.dir = t.TempDir()
	}
	if c.opts.Bin == "" {
		c.opts.Bin = BuildBinary(t)
	}
	if opts.Netns {
		nw, err := NewNetwork()
		if err != nil {
			t.Fatalf("cluster: %v", err)
		}
		c.net = nw
		t.Cleanup(func() { nw.Close() })
	}
	start := time.Now()
	first := c.newNode(t, "n1", "--bootstrap")
	c.launch(t, first)
	if err := c.waitReady(first); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	rest := make([]*Node, 0, n-1)
	for i := 2; i <= n; i++ {
		nd := c.newNode(t, "n"+strconv.Itoa(i), "--join", first.URL())
		c.launch(t, nd)
		rest = append(rest, nd)
	}
	if err := c.waitAllReady(rest); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ClusterReadyTimeout)
	defer cancel()
	tok, err := SetupAdmin(ctx, first.Client())
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	c.Token = tok
	// A strong read on every node waits for the admin to be applied there:
	// from then on the token is valid on every node.
	ids := c.IDs()
	for _, nd := range c.Nodes() {
		st, err := c.AdminState(ctx, nd, true)
		for err != nil && ctx.Err() == nil {
			// A fault binary whose strong reads are deliberately broken
			// needs a few tries.
			time.Sleep(50 * time.Millisecond)
			st, err = c.AdminState(ctx, nd, true)
		}
		if err != nil {
			t.Fatalf("cluster: %s: %v", nd.Name, err)
		}
		if got := st.MemberIDs(); !slices.Equal(got, ids) {
			t.Fatalf("cluster: %s lists members %v, want %v", nd.Name, got, ids)
		}
	}
	t.Logf("cluster of %d formed in %s (key %s...)", n, time.Since(start).Round(time.Millisecond), c.Key[:12])
	return c
}

// newNode prepares node id with fresh HTTP and Raft ports and the cluster
// flags plus extra.
func (c *Cluster) newNode(t testing.TB, id string, extra ...string) *Node {
	t.Helper()
	if c.net != nil {
		return c.newNetNode(t, id, extra...)
	}
	p, err := FreePorts(3)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	raftAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p[1]))
	args := []string{"--node-id", id, "--raft-addr", raftAddr}
	if !c.opts.NoGossip {
		args = append(args, "--gossip-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(p[2])))
	}
	nd := &Node{
		Name: id,
		Bin:  c.opts.Bin,
		Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(p[0])),
		Args: append(args, extra...),
	}
	c.mu.Lock()
	c.raft[id] = raftAddr
	c.mu.Unlock()
	return nd
}

// newNetNode prepares node id in its own namespace, on the fixed ports of
// its own address.
func (c *Cluster) newNetNode(t testing.TB, id string, extra ...string) *Node {
	t.Helper()
	ip, ns, err := c.net.Add(id)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	raftAddr := net.JoinHostPort(ip, strconv.Itoa(NetRaftPort))
	args := []string{"--node-id", id, "--raft-addr", raftAddr}
	if !c.opts.NoGossip {
		args = append(args, "--gossip-addr", net.JoinHostPort(ip, strconv.Itoa(NetGossipPort)))
	}
	nd := &Node{
		Name:  id,
		Bin:   c.opts.Bin,
		Addr:  net.JoinHostPort(ip, strconv.Itoa(NetHTTPPort)),
		Args:  append(args, extra...),
		Netns: ns,
	}
	c.mu.Lock()
	c.raft[id] = raftAddr
	c.mu.Unlock()
	return nd
}

// Network is the cluster's namespaced network (nil without Netns).
func (c *Cluster) Network() *Network { return c.net }

// launch starts nd as a member of c (same key and environment).
func (c *Cluster) launch(t testing.TB, nd *Node) {
	t.Helper()
	env := append([]string{"SVC_CLUSTER_KEY=" + c.Key}, c.opts.Env...)
	env = append(env, c.opts.NodeEnv[nd.Name]...)
	dir := filepath.Join(c.dir, nd.Name)
	if c.opts.Tmpfs > 0 {
		unmount, err := MountTmpfs(dir, c.opts.Tmpfs)
		if err != nil {
			t.Fatalf("cluster: %v", err)
		}
		t.Cleanup(unmount) // after the process's kill, registered below
	}
	nd.Start(t, dir, env...)
	c.mu.Lock()
	c.nodes = append(c.nodes, nd)
	c.mu.Unlock()
}

func (c *Cluster) waitReady(nd *Node) error {
	ctx, cancel := context.WithTimeout(context.Background(), ClusterReadyTimeout)
	defer cancel()
	return nd.WaitReady(ctx)
}

func (c *Cluster) waitAllReady(nodes []*Node) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, nd := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.waitReady(nd)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// AddNode starts one more process that joins through every current
// member's URL, with extra flags (for example --non-voter), waits until it
// is ready and adds it to Nodes. id must be new.
func (c *Cluster) AddNode(t testing.TB, id string, extra ...string) *Node {
	t.Helper()
	return c.AddNodeVia(t, id, c.Running(), extra...)
}

// AddNodeVia is AddNode joining through the given nodes only.
func (c *Cluster) AddNodeVia(t testing.TB, id string, via []*Node, extra ...string) *Node {
	t.Helper()
	if c.Node(id) != nil {
		t.Fatalf("cluster: node %s exists", id)
	}
	var urls []string
	for _, nd := range via {
		urls = append(urls, nd.URL())
	}
	nd := c.newNode(t, id, append([]string{"--join", strings.Join(urls, ",")}, extra...)...)
	c.launch(t, nd)
	if err := c.waitReady(nd); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	return nd
}

// StartDetached starts one more process with the cluster's key and
// environment and the given flags after --node-id and --raft-addr, without
// waiting for it and without joining (a node to add through the admin API,
// for example). It is part of Nodes.
func (c *Cluster) StartDetached(t testing.TB, id string, extra ...string) *Node {
	t.Helper()
	if c.Node(id) != nil {
		t.Fatalf("cluster: node %s exists", id)
	}
	nd := c.newNode(t, id, extra...)
	c.launch(t, nd)
	return nd
}

// Forget kills node id and drops it from Nodes (after removing it from
// the Raft configuration, for example).
func (c *Cluster) Forget(id string) {
	nd := c.Node(id)
	if nd == nil {
		return
	}
	nd.Kill()
	c.mu.Lock()
	c.nodes = slices.DeleteFunc(c.nodes, func(x *Node) bool { return x == nd })
	c.mu.Unlock()
}

// Nodes are the cluster's nodes, running or not, in start order.
func (c *Cluster) Nodes() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.nodes)
}

// IDs are the node ids of Nodes, sorted.
func (c *Cluster) IDs() []string {
	var ids []string
	for _, nd := range c.Nodes() {
		ids = append(ids, nd.Name)
	}
	sort.Strings(ids)
	return ids
}

// Running are the nodes whose process is alive.
func (c *Cluster) Running() []*Node {
	var out []*Node
	for _, nd := range c.Nodes() {
		if nd.Running() {
			out = append(out, nd)
		}
	}
	return out
}

// Node returns node id, or nil.
func (c *Cluster) Node(id string) *Node {
	for _, nd := range c.Nodes() {
		if nd.Name == id {
			return nd
		}
	}
	return nil
}

// RaftAddr is node id's Raft address.
func (c *Cluster) RaftAddr(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raft[id]
}

// Kill SIGKILLs node id.
func (c *Cluster) Kill(t testing.TB, id string) {
	t.Helper()
	nd := c.mustNode(t, id)
	if err := nd.Kill(); err != nil {
		t.Fatal(err)
	}
}

// Stop SIGTERMs node id and waits for its clean exit.
func (c *Cluster) Stop(t testing.TB, id string) {
	t.Helper()
	nd := c.mustNode(t, id)
	if err := nd.Stop(); err != nil {
		t.Fatal(err)
	}
}

// Restart starts node id again (same flags, data and ports) and waits
// until it is ready.
func (c *Cluster) Restart(t testing.TB, id string) {
	t.Helper()
	nd := c.mustNode(t, id)
	nd.Restart(t)
	if err := c.waitReady(nd); err != nil {
		t.Fatalf("cluster: restart: %v", err)
	}
}

// TryRestart is Restart that returns an error when the node is not ready
// in time (for callers that must heal everything before failing).
func (c *Cluster) TryRestart(t testing.TB, id string) error {
	t.Helper()
	nd := c.mustNode(t, id)
	nd.Restart(t)
	return c.waitReady(nd)
}

func (c *Cluster) mustNode(t testing.TB, id string) *Node {
	t.Helper()
	nd := c.Node(id)
	if nd == nil {
		t.Fatalf("cluster: no node %s", id)
	}
	return nd
}

// Client returns an anonymous client for nd. Every client the cluster
// hands out for a node shares one connection pool, so tests may ask for
// one per request; the copy returned may be changed freely (Timeout).
func (c *Cluster) Client(nd *Node) *Client {
	c.mu.Lock()
	base, ok := c.clients[nd]
	if !ok {
		base = nd.Client()
		c.clients[nd] = base
	}
	c.mu.Unlock()
	cp := *base
	return &cp
}

// Admin returns an admin client for nd (see Client).
func (c *Cluster) Admin(nd *Node) *Client { return c.Client(nd).WithToken(c.Token) }

// Summary is GET /_/cluster.
type Summary struct {
	NodeID   string `json:"node_id"`
	State    string `json:"state"`
	LeaderID string `json:"leader_id"`
	Healthy  bool   `json:"healthy"`
}

// Summary asks nd for GET /_/cluster.
func (c *Cluster) Summary(ctx context.Context, nd *Node) (Summary, error) {
	var s Summary
	cl := c.Client(nd)
	cl.Timeout = time.Second
	resp, err := cl.Do(ctx, "GET", "/_/cluster", nil)
	if err != nil {
		return s, err
	}
	if resp.Status != http.StatusOK {
		return s, fmt.Errorf("%s: /_/cluster: %s", nd.Name, resp)
	}
	return s, resp.JSON(&s)
}

// Member is one member of GET /api/v1/admin/cluster.
type Member struct {
	ID            string `json:"id"`
	RaftAddr      string `json:"raft_addr"`
	HTTPAddr      string `json:"http_addr"`
	Region        string `json:"region"`
	Suffrage      string `json:"suffrage"`
	Status        string `json:"status"`
	AppliedIndex  uint64 `json:"applied_index"`
	Lag           uint64 `json:"lag"`
	LastContactMs int64  `json:"last_contact_ms"`
}

// State is the data of GET /api/v1/admin/cluster.
type State struct {
	NodeID       string   `json:"node_id"`
	State        string   `json:"state"`
	LeaderID     string   `json:"leader_id"`
	Term         uint64   `json:"term"`
	CommitIndex  uint64   `json:"commit_index"`
	AppliedIndex uint64   `json:"applied_index"`
	Members      []Member `json:"members"`
}

// MemberIDs are the members' ids, sorted.
func (s State) MemberIDs() []string {
	var ids []string
	for _, m := range s.Members {
		ids = append(ids, m.ID)
	}
	sort.Strings(ids)
	return ids
}

// Member returns the member id, if listed.
func (s State) Member(id string) (Member, bool) {
	for _, m := range s.Members {
		if m.ID == id {
			return m, true
		}
	}
	return Member{}, false
}

// AdminState is GET /api/v1/admin/cluster on nd, a strong read when
// strong is set.
func (c *Cluster) AdminState(ctx context.Context, nd *Node, strong bool) (State, error) {
	var out struct {
		Data State `json:"data"`
	}
	cl := c.Admin(nd)
	if strong {
		cl = cl.Strong()
	}
	resp, err := cl.Do(ctx, "GET", "/api/v1/admin/cluster", nil)
	if err != nil {
		return out.Data, fmt.Errorf("%s: admin/cluster: %w", nd.Name, err)
	}
	if resp.Status != http.StatusOK {
		return out.Data, fmt.Errorf("%s: admin/cluster: %s", nd.Name, resp)
	}
	if err := resp.JSON(&out); err != nil {
		return out.Data, fmt.Errorf("%s: admin/cluster: %w", nd.Name, err)
	}
	return out.Data, nil
}

// Leader is the running node that reports itself leader and that every
// running node names as leader, or nil.
func (c *Cluster) Leader() *Node {
	l, _ := c.leader(context.Background())
	return l
}

func (c *Cluster) leader(ctx context.Context) (*Node, string) {
	running := c.Running()
	var leader *Node
	var views []string
	agree := true
	ids := map[string]bool{}
	for _, nd := range running {
		s, err := c.Summary(ctx, nd)
		if err != nil {
			views = append(views, fmt.Sprintf("%s: %v", nd.Name, err))
			agree = false
			continue
		}
		views = append(views, fmt.Sprintf("%s: %s, leader %q", nd.Name, s.State, s.LeaderID))
		ids[s.LeaderID] = true
		if s.State == "Leader" {
			if leader != nil {
				agree = false
			}
			leader = nd
		}
	}
	view := strings.Join(views, "; ")
	if leader == nil || !agree || len(ids) != 1 || !ids[leader.Name] {
		return nil, view
	}
	return leader, view
}

// WaitLeader waits until Leader is not nil.
func (c *Cluster) WaitLeader(timeout time.Duration) (*Node, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		l, view := c.leader(ctx)
		if l != nil {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no agreed leader within %s; last view: %s", timeout, view)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// MustLeader is WaitLeader that fails the test.
func (c *Cluster) MustLeader(t testing.TB, timeout time.Duration) *Node {
	t.Helper()
	l, err := c.WaitLeader(timeout)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	return l
}

// Followers are the running nodes other than the current leader (every
// running node when there is no agreed leader).
func (c *Cluster) Followers() []*Node {
	l := c.Leader()
	var out []*Node
	for _, nd := range c.Running() {
		if nd != l {
			out = append(out, nd)
		}
	}
	return out
}

// Digest is the data of GET /api/v1/admin/cluster/digest.
type Digest struct {
	AppliedIndex uint64            `json:"applied_index"`
	Tables       map[string]string `json:"tables"`
}

// Equal reports whether two digests hash the same tables at the same
// index.
func (d Digest) Equal(o Digest) bool {
	return d.AppliedIndex == o.AppliedIndex && maps.Equal(d.Tables, o.Tables)
}

// Diff describes how o differs from d (empty when Equal).
func (d Digest) Diff(o Digest) string {
	var out []string
	if d.AppliedIndex != o.AppliedIndex {
		out = append(out, fmt.Sprintf("applied_index %d vs %d", d.AppliedIndex, o.AppliedIndex))
	}
	keys := map[string]bool{}
	for k := range d.Tables {
		keys[k] = true
	}
	for k := range o.Tables {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, b := d.Tables[k], o.Tables[k]
		if a != b {
			out = append(out, fmt.Sprintf("%s %.12s vs %.12s", k, a, b))
		}
	}
	return strings.Join(out, ", ")
}

// Digest asks nd for its table digest, after it has applied minIndex.
func (c *Cluster) Digest(ctx context.Context, nd *Node, minIndex uint64) (Digest, error) {
	var out struct {
		Data Digest `json:"data"`
	}
	cl := c.Admin(nd)
	if minIndex > 0 {
		cl = cl.MinIndex(minIndex)
	}
	resp, err := cl.Do(ctx, "GET", "/api/v1/admin/cluster/digest", nil)
	if err != nil {
		return out.Data, fmt.Errorf("%s: digest: %w", nd.Name, err)
	}
	if resp.Status != http.StatusOK {
		return out.Data, fmt.Errorf("%s: digest: %s", nd.Name, resp)
	}
	if err := resp.JSON(&out); err != nil {
		return out.Data, fmt.Errorf("%s: digest: %w", nd.Name, err)
	}
	return out.Data, nil
}

// MaxIndex is the highest commit index any running node reports.
func (c *Cluster) MaxIndex(ctx context.Context) (uint64, error) {
	var hi uint64
	var errs []error
	for _, nd := range c.Running() {
		st, err := c.AdminState(ctx, nd, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		hi = max(hi, st.CommitIndex, st.AppliedIndex)
	}
	if hi == 0 {
		return 0, errors.Join(append(errs, errors.New("no node answered"))...)
	}
	return hi, nil
}

// Converge waits until every running node has applied the highest index
// any of them reports (X-Svc-Min-Index) and their digests are equal, at
// the same applied index. It returns the common digest, or an error
// describing the last disagreement when timeout passes.
func (c *Cluster) Converge(timeout time.Duration) (Digest, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	for {
		d, why := c.convergeOnce(ctx)
		if why == "" {
			return d, nil
		}
		last = why
		select {
		case <-ctx.Done():
			return Digest{}, fmt.Errorf("nodes did not converge within %s: %s", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) convergeOnce(ctx context.Context) (Digest, string) {
	hi, err := c.MaxIndex(ctx)
	if err != nil {
		return Digest{}, err.Error()
	}
	running := c.Running()
	if len(running) == 0 {
		return Digest{}, "no node is running"
	}
	digests := make([]Digest, len(running))
	for i, nd := range running {
		d, err := c.Digest(ctx, nd, hi)
		if err != nil {
			return Digest{}, fmt.Sprintf("max index %d: %v", hi, err)
		}
		digests[i] = d
	}
	var diffs []string
	for i := 1; i < len(digests); i++ {
		if !digests[0].Equal(digests[i]) {
			diffs = append(diffs, fmt.Sprintf("%s vs %s: %s", running[0].Name, running[i].Name, digests[0].Diff(digests[i])))
		}
	}
	if len(diffs) > 0 {
		return Digest{}, fmt.Sprintf("max index %d: %s", hi, strings.Join(diffs, "; "))
	}
	return digests[0], ""
}
