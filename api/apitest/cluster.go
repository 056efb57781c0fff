package apitest

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"svcd/cluster"
	"svcd/cmd/svcd/stack"
	"svcd/fsm"
)

// Cluster is several nodes in this process, one Raft cluster over real
// TCP on loopback (the cluster-key handshake, forwarding and status
// requests included), each serving the API on its own loopback port.
// Every node shares one token signing key, as joined nodes do, so an
// admin token of one is valid on all.
type Cluster struct {
	// Nodes are the members in the order they were started; Nodes[0]
	// bootstrapped the cluster.
	Nodes []*Server

	opts      Options
	key       string
	jwtSecret string
}

// ClusterKey is the cluster key of the nodes StartCluster starts.
const ClusterKey = "apitest-cluster-key-0123456789abcdef"

// StartCluster starts n nodes (node1 ... nodeN): node1 bootstraps, the
// others are added as voters, and it returns once every node is ready.
// Options.ClusterKey is ignored: every node has ClusterKey.
func StartCluster(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	opts.ClusterKey = ClusterKey
	c := &Cluster{opts: opts, key: ClusterKey, jwtSecret: "apitest-jwt-secret-0123456789abcdef0123456789"}
	first := c.startNode(t, "node1", true)
	c.Nodes = append(c.Nodes, first)
	waitReady(t, first)
	for i := 2; i <= n; i++ {
		s := c.StartDetached(t, fmt.Sprintf("node%d", i))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := first.Stack.Node.Join(ctx, cluster.JoinRequest{ID: s.Stack.Node.NodeID(), Addr: s.RaftAddr, Voter: true})
		cancel()
		if err != nil {
			t.Fatalf("apitest: join %s: %v", s.Stack.Node.NodeID(), err)
		}
		waitReady(t, s)
	}
	return c
}

// StartDetached starts one more node with the cluster's key and signing
// key but adds it to nothing: it waits, leaderless, until a member adds
// it (POST /api/v1/admin/cluster/members). It is not waited for.
func (c *Cluster) StartDetached(t testing.TB, id string) *Server {
	t.Helper()
	s := c.startNode(t, id, false)
	c.Nodes = append(c.Nodes, s)
	return s
}

func (c *Cluster) startNode(t testing.TB, id string, bootstrap bool) *Server {
	t.Helper()
	logger := c.opts.logger().With("node", id)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("apitest: listen: %v", err)
	}
	raftAddr := freeAddr(t)
	st, err := stack.Open(stack.Config{
		DataDir:        dir,
		NodeID:         id,
		RaftAddr:       raftAddr,
		Bootstrap:      bootstrap,
		ClusterKey:     c.key,
		HTTPAddr:       ln.Addr().String(),
		JWTSecret:      c.jwtSecret,
		PasswordParams: testPasswordParams(),
		OnStall:        func(st fsm.Stall) { t.Errorf("apitest: %s: the state machine stopped: %s", id, st.Reason) },
		EncryptionKey:  c.opts.EncryptionKey,
		Clock:          c.opts.Clock,
	}, logger)
	if err != nil {
		ln.Close()
		t.Fatalf("apitest: open %s: %v", id, err)
	}
	s := serve(t, st, dir, ln, logger, c.opts)
	s.RaftAddr = raftAddr
	return s
}

// waitReady waits (20 s at most) until s is ready: it has a leader, has
// caught up and is migrated.
func waitReady(t testing.TB, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Stack.WaitReady(ctx); err != nil {
		t.Fatalf("apitest: %s not ready: %v", s.Stack.Node.NodeID(), err)
	}
}

// WaitReady waits (20 s at most) until s is ready.
func (c *Cluster) WaitReady(t testing.TB, s *Server) { t.Helper(); waitReady(t, s) }

// Leader waits (10 s at most) until the running nodes agree on a leader
// and returns it.
func (c *Cluster) Leader(t testing.TB) *Server {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if l := c.agreedLeader(); l != nil {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("apitest: the nodes agree on no leader after 10 s (%s)", c.describe())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// agreedLeader is the leader every running member names, or nil.
func (c *Cluster) agreedLeader() *Server {
	var leader *Server
	id := ""
	for _, s := range c.members() {
		l := s.Stack.Node.LeaderID()
		if l == "" || (id != "" && l != id) {
			return nil
		}
		id = l
		if s.Stack.Node.NodeID() == l && s.Stack.Node.IsLeader() {
			leader = s
		}
	}
	return leader
}

// AdminToken creates the first admin through the leader (or signs it in)
// and returns its token once every running member has applied it, so
// the token is valid on each.
func (c *Cluster) AdminToken(t testing.TB) string {
	t.Helper()
	tok := c.Leader(t).AdminToken(t)
	c.Sync(t)
	return tok
}

// Sync waits (10 s at most) until every running member has applied
// everything the leader has committed.
func (c *Cluster) Sync(t testing.TB) {
	t.Helper()
	idx := c.Leader(t).Stack.Node.Stats().CommitIndex
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range c.members() {
		if err := s.Stack.Node.WaitIndex(ctx, idx); err != nil {
			t.Fatalf("apitest: %s has not applied index %d: %v", s.Stack.Node.NodeID(), idx, err)
		}
	}
}

// Followers are the running members other than the leader the nodes
// agree on.
func (c *Cluster) Followers(t testing.TB) []*Server {
	t.Helper()
	l := c.Leader(t)
	var out []*Server
	for _, s := range c.members() {
		if s != l {
			out = append(out, s)
		}
	}
	return out
}

// Node returns the node with id, or nil.
func (c *Cluster) Node(id string) *Server {
	for _, s := range c.Nodes {
		if s.Stack.Node.NodeID() == id {
			return s
		}
	}
	return nil
}

// members are the running nodes that are in the Raft configuration as
// the first running node sees it.
func (c *Cluster) members() []*Server {
	var out []*Server
	var conf map[string]bool
	for _, s := range c.Nodes {
		if s.stopped() {
			continue
		}
		if conf == nil {
			servers, err := s.Stack.Node.Servers()
			if err != nil {
				return nil
			}
			conf = map[string]bool{}
			for _, sv := range servers {
				conf[sv.ID] = true
			}
		}
		if conf[s.Stack.Node.NodeID()] {
			out = append(out, s)
		}
	}
	return out
}

func (c *Cluster) describe() string {
	out := ""
	for _, s := range c.Nodes {
		if s.stopped() {
			continue
		}
		out += fmt.Sprintf("%s: %s, leader %q; ", s.Stack.Node.NodeID(), s.Stack.Node.State(), s.Stack.Node.LeaderID())
	}
	return out
}

// freeAddr is a loopback TCP address nothing listens on right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("apitest: listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
