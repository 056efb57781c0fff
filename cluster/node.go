package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"svcd/cluster/liblog"
	"svcd/fsm"
)

// Node is one member of the Raft cluster.
type Node struct {
	cfg    Config
	raft   *raft.Raft
	logs   *raftboltdb.BoltStore
	snaps  *tidySnapshotStore
	trans  raft.Transport
	sl     *authStreamLayer // nil without a cluster key: no forwarding
	gossip *gossip          // nil without a gossip address
	libs   *liblog.Bridge   // raft's and memberlist's loggers
	pool   connPool         // idle forwarding connections
	tracer tracerHolder     // the tracer of forwarded writes (trace.go)
	sm     StateMachine
	// readyIndex is the last entry found in the log at start that reaches
	// the state machine (a command or a membership change): the node is
	// ready once its replica has applied it.
	readyIndex uint64
	// needCatchUp: the node started without Raft state and joined, so it
	// is caught up only at catchUpTo, the leader's commit index learned at
	// start (catchup.go; 0 until learned, a joined cluster's is never 0).
	needCatchUp bool
	catchUpTo   atomic.Uint64
	ready       atomic.Bool
	closing     atomic.Bool
	// running is set once raft is started: RPCs that arrive on the
	// stream layer before (a peer's status probe while a restarted node
	// is still restoring its snapshot) are refused, not served from a nil
	// raft.
	running atomic.Bool
	// acked is the highest log index of a write this node has answered
	// to a client: its local reads never reflect less (AckedIndex).
	acked atomic.Uint64
	// snapshots counts the snapshots this node persisted.
	snapshots atomic.Uint64
	// applied remembers when the last batches were applied (traces).
	applied applyTimes
	// storage measures free space (storage.go); stop ends its watch and
	// the node's other loops (commit nudges, catch-up).
	storage *storage
	stop    chan struct{}
	// nudge asks the leader to tell followers of a commit at once
	// (commit_nudge.go).
	nudge chan struct{}
	// termCommitted is the last term in which this node, leading, saw an
	// entry of its own term commit (read_index.go): before that its
	// commit index may miss entries the previous leader committed.
	termCommitted atomic.Uint64
	// httpAddrs maps member ids to the HTTP address each last reported
	// (status.go), so a node can name a leader it can no longer reach.
	httpAddrs sync.Map
}

// Open starts the Raft node over sm, recovering existing state or, in
// single-node mode or with Bootstrap, forming a new one-voter cluster.
func Open(cfg Config, sm StateMachine) (*Node, error) {
	cfg.setDefaults()
	if cfg.NodeID == "" {
		return nil, errors.New("cluster: node id required")
	}
	if err := cfg.Timing.Validate(); err != nil && !cfg.SingleNode() {
		return nil, fmt.Errorf("cluster: raft timing: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	// The log is checked before bbolt, raft-boltdb or Raft read it
	// (logopen.go): damage is an error that names it, never a panic.
	logs, err := openLog(cfg)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, logs: logs, sm: sm, storage: newStorage(cfg.MinFreeBytes, cfg.Dir, filepath.Dir(sm.Path())),
		stop: make(chan struct{}), nudge: make(chan struct{}, 1)}
	if err := n.open(); err != nil {
		logs.Close()
		return nil, err
	}
	return n, nil
}

func (n *Node) open() error {
	cfg := n.cfg
	// raft logs through the node's logger: same format, same node id,
	// and a restarting peer's refusals are not errors (liblog).
	n.libs = liblog.New(cfg.Logger, liblog.Options{SingleNode: cfg.SingleNode()})
	hl := n.libs.Raft()
	snaps, err := openSnapshotStore(cfg.Dir, hl, cfg.Logger)
	if err != nil {
		return fmt.Errorf("cluster: snapshot store: %w", err)
	}
	n.snaps = snaps
	if err := checkRaftState(cfg.Dir, n.logs, n.sm.AppliedIndex(), nil); err != nil {
		return err
	}
	if n.readyIndex, err = lastApplicableIndex(n.logs); err != nil {
		return fmt.Errorf("cluster: read log: %w", err)
	}

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.Logger = hl
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.SnapshotInterval = cfg.SnapshotInterval
	rc.TrailingLogs = cfg.TrailingLogs
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = 256
	timing := cfg.Timing
	if cfg.SingleNode() {
		// A lone voter needs nobody's heartbeat: short timeouts only make
		// it elect itself sooner after a restart.
		timing = Timing{HeartbeatTimeout: 150 * time.Millisecond, ElectionTimeout: 150 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond}
	}
	if err := timing.apply(rc); err != nil {
		return err
	}
	noRestore, err := n.reconcile()
	if err != nil {
		return err
	}
	rc.NoSnapshotRestoreOnStart = noRestore

	var addr raft.ServerAddress
	if cfg.SingleNode() {
		a, t := raft.NewInmemTransport(raft.ServerAddress("inmem:" + cfg.NodeID))
		addr, n.trans = a, t
	} else {
		tcpAddr, err := net.ResolveTCPAddr("tcp", cfg.RaftAddr)
		if err != nil {
			return fmt.Errorf("cluster: raft address: %w", err)
		}
		if cfg.ClusterKey != "" {
			opt := streamOptions{rpc: n.serveRPC}
			if cfg.TLS.Enabled() {
				if opt.tlsServer, opt.tlsClient, err = cfg.TLS.tlsConfigs(); err != nil {
					return err
				}
			}
			sl, err := newAuthStreamLayer(cfg.RaftAddr, tcpAddr, DeriveKey(cfg.ClusterKey, "raft"), cfg.Logger, opt)
			if err != nil {
				return fmt.Errorf("cluster: raft transport: %w", err)
			}
			n.sl = sl
			t := raft.NewNetworkTransportWithLogger(sl, 5, 10*time.Second, hl)
			addr, n.trans = t.LocalAddr(), guardedTransport{t} // pipeline.go
		} else {
			t, err := raft.NewTCPTransportWithLogger(cfg.RaftAddr, tcpAddr, 5, 10*time.Second, hl)
			if err != nil {
				return fmt.Errorf("cluster: raft transport: %w", err)
			}
			addr, n.trans = t.LocalAddr(), guardedTransport{t}
		}
	}

	cache, err := raft.NewLogCache(1024, n.logs)
	if err != nil {
		return fmt.Errorf("cluster: log cache: %w", err)
	}
	has, err := raft.HasExistingState(cache, n.logs, snaps)
	if err != nil {
		return fmt.Errorf("cluster: inspect state: %w", err)
	}
	bootstrap, err := n.shouldBootstrap(has) // reseed.go
	n.needCatchUp = !has && !bootstrap && !cfg.SingleNode()
	if err != nil {
		return err
	}
	if bootstrap {
		boot := raft.Configuration{Servers: []raft.Server{{
			ID: rc.LocalID, Address: addr, Suffrage: raft.Voter,
		}}}
		if err := raft.BootstrapCluster(rc, cache, n.logs, snaps, n.trans, boot); err != nil {
			return fmt.Errorf("cluster: bootstrap: %w", err)
		}
	}
	r, err := newRaft(cfg.Dir, rc, &raftFSM{sm: n.sm, onApply: n.cfg.OnApply, snapshots: &n.snapshots, times: &n.applied}, cache, n.logs, snaps, n.trans)
	if err != nil {
		return fmt.Errorf("cluster: start raft: %w", err)
	}
	n.raft = r
	n.running.Store(true)
	go n.watchStorage(n.stop)
	go n.runNudges(n.stop)
	if n.sl != nil {
		go n.watchLeader(n.stop)
	}
	if n.needCatchUp {
		go n.learnCatchUp(n.stop)
	}
	if cfg.GossipAddr != "" && cfg.ClusterKey != "" {
		if err := n.startGossip(); err != nil {
			r.Shutdown().Error()
			return err
		}
	}
	return nil
}

// Apply proposes cmd and waits until it is committed and applied here. On
// a follower the command is forwarded to the leader over the authenticated
// channel, and the answer waits until this replica has applied it, so the
// caller reads its own write on this node. It returns the state machine's
// result, the entry's log index and the command's own error (a domain
// error) or a cluster error.
func (n *Node) Apply(ctx context.Context, cmd fsm.Command) (any, uint64, error) {
	ctx, span := childSpan(ctx, "propose")
	defer span.End()
	if n.closing.Load() {
		return nil, 0, ErrShutdown
	}
	wctx, cancel := context.WithTimeout(ctx, n.applyWait(ctx))
	defer cancel()
	if err := n.writable(); err != nil {
		return nil, 0, err
	}
	for {
		if n.IsLeader() {
			return n.applyLocal(ctx, cmd)
		}
		if n.sl != nil && n.LeaderID() != "" {
			reply, err := n.forward(wctx, cmd)
			if err != nil {
				return nil, 0, err
			}
			if reply.NotLeader {
				continue // this node leads now
			}
			if err := failureErr(reply.Failure); err != nil {
				return nil, reply.Index, err
			}
			if n.cfg.Codec == nil {
				return nil, reply.Index, errors.New("cluster: no result codec")
			}
			v, err := n.cfg.Codec.DecodeResult(reply.Result)
			if n.cfg.Faults.AckBeforeApply {
				return v, reply.Index, err
			}
			// The command is committed: wait (bounded) for this replica to
			// apply it, so the caller reads its write here. A replica cut
			// off from the leader still answers the committed result after
			// the wait rather than inviting a retry that would repeat it;
			// the read floor then holds this node's local reads back until
			// it has caught up.
			n.raiseAcked(reply.Index)
			wait, cancelWait := context.WithTimeout(ctx, 2*n.applyWait(ctx))
			if werr := n.WaitIndex(wait, reply.Index); werr != nil && ctx.Err() == nil {
				n.cfg.Logger.Warn("forwarded write committed but not yet applied here", "index", reply.Index, "err", werr)
			}
			cancelWait()
			return v, reply.Index, err
		}
		select {
		case <-wctx.Done():
			if n.closing.Load() {
				return nil, 0, ErrShutdown
			}
			return nil, 0, ErrNoLeader
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// AckedIndex is the read floor: the highest log index of a write this
// node has answered. A local read waits until the replica has applied at
// least this much, so no client of this node reads older than a write the
// node acknowledged, even when the answer could not wait for the apply.
func (n *Node) AckedIndex() uint64 { return n.acked.Load() }

func (n *Node) raiseAcked(idx uint64) {
	for {
		cur := n.acked.Load()
		if idx <= cur || n.acked.CompareAndSwap(cur, idx) {
			return
		}
	}
}

// applyLocal proposes on this node, which must lead.
func (n *Node) applyLocal(ctx context.Context, cmd fsm.Command) (any, uint64, error) {
	if err := n.writable(); err != nil {
		return nil, 0, err // also for a write a follower forwarded
	}
	proposed := time.Now()
	f := n.raft.Apply(cmd.Encode(), n.cfg.LeaderWait)
	err := f.Error()
	n.commitApplySpans(ctx, proposed, f.Index(), err)
	if err != nil {
		switch {
		case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrEnqueueTimeout),
			errors.Is(err, raft.ErrLeadershipTransferInProgress):
			return nil, 0, ErrNoLeader
		case errors.Is(err, raft.ErrRaftShutdown):
			return nil, 0, ErrShutdown
		case errors.Is(err, raft.ErrLeadershipLost):
			return nil, 0, ErrIndeterminate
		}
		return nil, 0, fmt.Errorf("cluster: apply: %w", err)
	}
	res, ok := f.Response().(fsm.Result)
	if !ok {
		return nil, f.Index(), fmt.Errorf("cluster: unexpected apply response %T", f.Response())
	}
	return res.Value, f.Index(), res.Err
}

// AppliedIndex is the last entry this replica's state machine reflects.
func (n *Node) AppliedIndex() uint64 { return n.sm.AppliedIndex() }

// WaitIndex blocks until this replica reflects every entry up to idx (the
// state machine never sees no-op entries, so it waits for the last entry at
// or below idx that reaches it), ctx ends or the node stops.
func (n *Node) WaitIndex(ctx context.Context, idx uint64) error {
	for {
		if n.appliedThrough(idx) {
			return nil
		}
		// Woken by the state machine's apply; the short bound covers an
		// idx that never reaches it (a no-op or barrier entry), which
		// only raft's applied index shows.
		wctx, cancel := context.WithTimeout(ctx, 2*time.Millisecond)
		err := n.sm.WaitApplied(wctx, idx)
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case n.closing.Load(), errors.Is(err, fsm.ErrClosed):
			return ErrShutdown
		}
	}
}

// ReadIndex returns an index that a linearizable read must wait for: the
// leader confirms with a quorum that it still leads and answers its commit
// index.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	wctx, cancel := context.WithTimeout(ctx, n.cfg.LeaderWait)
	defer cancel()
	if n.cfg.Faults.LocalReadIndex {
		return n.sm.AppliedIndex(), nil
	}
	for {
		if n.IsLeader() {
			if r := n.leaderReadIndex(); !r.NotLeader {
				return r.Index, nil
			}
		} else if n.sl != nil && n.LeaderID() != "" {
			reply, err := n.call(wctx, connIndex, []byte("{}"))
			if err != nil {
				return 0, err
			}
			if !reply.NotLeader {
				return reply.Index, nil
			}
		}
		select {
		case <-wctx.Done():
			return 0, ErrNoLeader
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Join adds a server through the leader (idempotent).
func (n *Node) Join(ctx context.Context, j JoinRequest) error {
	wctx, cancel := context.WithTimeout(ctx, 2*n.cfg.LeaderWait)
	defer cancel()
	for {
		if n.IsLeader() {
			return n.addServer(j)
		}
		if n.sl != nil && n.LeaderID() != "" {
			body, _ := json.Marshal(j)
			reply, err := n.call(wctx, connJoin, body)
			if err != nil {
				return err
			}
			if !reply.NotLeader {
				return failureErr(reply.Failure)
			}
		}
		select {
		case <-wctx.Done():
			return ErrNoLeader
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// NodeID is this node's id.
func (n *Node) NodeID() string { return n.cfg.NodeID }

// State is the Raft state: Leader, Follower, Candidate or Shutdown.
func (n *Node) State() string { return n.raft.State().String() }

// IsLeader reports whether this node currently leads.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// LeaderID is the id of the known leader, or "".
func (n *Node) LeaderID() string {
	_, id := n.raft.LeaderWithID()
	return string(id)
}

// Ready reports whether the node has a leader and has caught up.
func (n *Node) Ready() bool { return n.CaughtUp() && n.LeaderID() != "" }

// CaughtUp reports whether the replica has applied every entry the log held
// when the node started. Once true it stays true.
func (n *Node) CaughtUp() bool {
	if n.ready.Load() {
		return true
	}
	// raft's own AppliedIndex moves when entries are handed to the state
	// machine, not when they are applied: ask the replica.
	if n.sm.AppliedIndex() < n.readyIndex {
		return false
	}
	if n.needCatchUp && (n.catchUpTo.Load() == 0 || !n.appliedThrough(n.catchUpTo.Load())) {
		return false
	}
	n.ready.Store(true)
	return true
}

// appliedThrough reports whether the replica reflects every entry up to
// idx (no-op and barrier entries never reach it; see WaitIndex).
func (n *Node) appliedThrough(idx uint64) bool {
	if n.sm.AppliedIndex() >= idx {
		return true
	}
	if n.raft.AppliedIndex() < idx {
		return false
	}
	// An entry the log no longer holds was compacted into a snapshot
	// raft has already handed over.
	target, err := lastApplicableAtOrBelow(n.logs, idx)
	return err != nil || n.sm.AppliedIndex() >= target
}

// WaitReady blocks until Ready or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !n.Ready() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Stats are the figures of the Raft node for status endpoints.
type Stats struct {
	Term         uint64
	CommitIndex  uint64
	AppliedIndex uint64
	LastIndex    uint64
	// Snapshots is how many snapshots this node persisted since it started.
	Snapshots uint64
}

// Stats returns the node's current indexes and term.
func (n *Node) Stats() Stats {
	return Stats{
		Term:         n.raft.CurrentTerm(),
		CommitIndex:  n.raft.CommitIndex(),
		AppliedIndex: n.raft.AppliedIndex(),
		LastIndex:    n.raft.LastIndex(),
		Snapshots:    n.snapshots.Load(),
	}
}

// Snapshot takes a Raft snapshot now and compacts the log.
func (n *Node) Snapshot() (index, term uint64, size int64, err error) {
	f := n.raft.Snapshot()
	if err := f.Error(); err != nil {
		return 0, 0, 0, err
	}
	meta, rc, err := f.Open()
	if err != nil {
		return 0, 0, 0, err
	}
	rc.Close()
	return meta.Index, meta.Term, meta.Size, nil
}

// Shutdown hands leadership to another voter if this node leads one of
// several, then stops Raft and closes the log. The state machine is closed
// by its owner afterwards.
func (n *Node) Shutdown() error {
	if !n.closing.CompareAndSwap(false, true) {
		return nil
	}
	if n.IsLeader() && n.otherVoters() > 0 {
		n.libs.HandOver()
		if err := n.raft.LeadershipTransfer().Error(); err != nil {
			n.cfg.Logger.Warn("leadership transfer before shutdown failed", "err", err)
		}
	}
	n.stopGossip()
	n.pool.closeAll()
	close(n.stop)
	// A state machine stopped at an entry holds Raft's apply goroutine,
	// which Raft's shutdown waits for: end that wait first.
	n.sm.Interrupt()
	err := n.raft.Shutdown().Error()
	if c, ok := n.trans.(io.Closer); ok {
		c.Close()
	}
	return errors.Join(err, n.logs.Close())
}

func (n *Node) otherVoters() int {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return 0
	}
	c := 0
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter && s.ID != raft.ServerID(n.cfg.NodeID) {
			c++
		}
	}
	return c
}

// lastApplicableIndex scans the log backwards for the last entry the state
// machine sees (no-op and barrier entries never reach it). Entries before
// the first index were compacted into a snapshot, which Raft restores
// synchronously while it starts.
func lastApplicableIndex(logs raft.LogStore) (uint64, error) {
	last, err := logs.LastIndex()
	if err != nil {
		return 0, err
	}
	return lastApplicableAtOrBelow(logs, last)
}

// lastApplicableAtOrBelow is lastApplicableIndex limited to entries <= at.
func lastApplicableAtOrBelow(logs raft.LogStore, at uint64) (uint64, error) {
	first, err := logs.FirstIndex()
	if err != nil {
		return 0, err
	}
	for idx := at; idx >= first && idx > 0; idx-- {
		var l raft.Log
		if err := logs.GetLog(idx, &l); err != nil {
			return 0, err
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			return idx, nil
		}
	}
	return 0, nil
}
