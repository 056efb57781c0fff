package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"go.opentelemetry.io/otel/trace"

	"svcd/cluster/frame"
	"svcd/fsm"
)

// The node's own RPCs ride on the Raft port, behind the same cluster-key
// handshake: a follower forwards commands to the leader ('F'), asks it for
// a read index ('I'), and a node relays a join to it ('J').

// ResultCodec carries a command's result and error between nodes. The
// engine, which knows its result and error types, implements it.
type ResultCodec interface {
	EncodeResult(v any, err error) ([]byte, error)
	DecodeResult(b []byte) (any, error)
}

const maxFrame = 64 << 20

// rpcReply is the answer to every RPC.
type rpcReply struct {
	Index     uint64 `json:"index,omitempty"`
	Result    []byte `json:"result,omitempty"` // ResultCodec form
	NotLeader bool   `json:"not_leader,omitempty"`
	Failure   string `json:"failure,omitempty"` // a cluster error: no_leader, indeterminate, shutdown, other text
	// Leader is the id of the leader that answered (membership changes).
	Leader string `json:"leader,omitempty"`
}

// JoinRequest asks the leader to add a server.
type JoinRequest struct {
	ID      string `json:"id"`
	Addr    string `json:"addr"`
	Voter   bool   `json:"voter"`
	Address string `json:"-"`
	// Reseed asks to remove the member and add it back even when its
	// address and suffrage are unchanged: its Raft state was wiped
	// (reseed.go).
	Reseed bool `json:"reseed,omitempty"`
}

func failureOf(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNoLeader):
		return "no_leader"
	case errors.Is(err, ErrIndeterminate):
		return "indeterminate"
	case errors.Is(err, ErrShutdown):
		return "shutdown"
	case errors.Is(err, ErrDiskFull):
		return "disk_full:" + err.Error()
	case errors.Is(err, ErrStalled):
		return "stalled:" + err.Error()
	case errors.Is(err, ErrNoSuchMember):
		return "no_such_member"
	case errors.Is(err, ErrAlreadyLeader):
		return "already_leader"
	case errors.Is(err, ErrNoOtherVoter):
		return "no_other_voter"
	case errors.Is(err, ErrTransferInProgress):
		return "transfer_in_progress"
	case errors.Is(err, ErrTransferFailed):
		return "transfer_failed:" + err.Error()
	}
	return err.Error()
}

func failureErr(s string) error {
	switch s {
	case "":
		return nil
	case "no_leader":
		return ErrNoLeader
	case "indeterminate":
		return ErrIndeterminate
	case "shutdown":
		return ErrShutdown
	case "no_such_member":
		return ErrNoSuchMember
	case "already_leader":
		return ErrAlreadyLeader
	case "no_other_voter":
		return ErrNoOtherVoter
	case "transfer_in_progress":
		return ErrTransferInProgress
	case "unknown request":
		// A leader of an older version, asked for a request it does not
		// know: only membership changes are that new.
		return ErrNotForwarded
	}
	if msg, ok := strings.CutPrefix(s, "transfer_failed:"); ok {
		return &relayedError{msg: msg, cause: ErrTransferFailed}
	}
	if msg, ok := strings.CutPrefix(s, "disk_full:"); ok {
		return &relayedError{msg: msg, cause: ErrDiskFull}
	}
	if msg, ok := strings.CutPrefix(s, "stalled:"); ok {
		return &relayedError{msg: msg, cause: ErrStalled}
	}
	if msg, ok := strings.CutPrefix(s, failUnknown); ok {
		return &relayedError{msg: msg, cause: ErrUnknownToLeader}
	}
	return errors.New("cluster: leader: " + s)
}

// relayedError is a storage refusal of the leader, relayed to the
// follower that forwarded the write: the leader's message, the same cause.
type relayedError struct {
	msg   string
	cause error
}

func (e *relayedError) Error() string { return e.msg }
func (e *relayedError) Unwrap() error { return e.cause }

// serveRPC answers one RPC on an authenticated connection.
func (n *Node) serveRPC(kind byte, c net.Conn) {
	defer c.Close()
	if !n.running.Load() {
		return // not started yet: the caller sees a closed connection and retries
	}
	if kind == connBlob {
		if n.cfg.BlobServer != nil {
			n.cfg.BlobServer(c)
		}
		return
	}
	for {
		// Forwarding connections carry one request after another (the
		// follower pools them); the others carry one.
		c.SetReadDeadline(time.Now().Add(rpcIdle))
		req, err := frame.Read(c, maxFrame)
		if err != nil {
			return
		}
		n.serveOne(kind, c, req)
		if kind != connForward {
			return
		}
	}
}

// rpcIdle is how long a server keeps an idle forwarding connection; the
// pool drops its connections sooner (poolIdle).
const (
	rpcIdle  = 60 * time.Second
	poolIdle = 20 * time.Second
)

func (n *Node) serveOne(kind byte, c net.Conn, req []byte) {
	if kind == connStatus {
		b, _ := json.Marshal(n.LocalStatus())
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		frame.Write(c, b)
		return
	}
	var reply rpcReply
	if !n.IsLeader() {
		reply.NotLeader = true
	} else {
		switch kind {
		case connForward:
			reply = n.leaderApply(context.Background(), req)
		case connTraced:
			ctx, b, err := decodeTraced(req)
			if err != nil {
				reply.Failure = err.Error()
				break
			}
			ctx, span := n.startSpan(ctx, "leader.apply", trace.SpanKindServer)
			reply = n.leaderApply(ctx, b)
			span.End()
		case connIndex:
			reply = n.leaderReadIndex()
		case connJoin:
			var j JoinRequest
			if err := json.Unmarshal(req, &j); err != nil {
				reply.Failure = "bad join request"
			} else {
				reply.Failure = failureOf(n.addServer(j))
			}
		case connMember, connTransfer:
			reply = n.serveChange(req)
		default:
			reply.Failure = "unknown request"
		}
	}
	b, _ := json.Marshal(reply)
	c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	frame.Write(c, b)
}

func (n *Node) leaderApply(ctx context.Context, data []byte) rpcReply {
	cmd, err := fsm.Decode(data)
	if err != nil {
		return rpcReply{Failure: err.Error()}
	}
	if f := n.refuseUnknown(cmd); f != "" {
		return rpcReply{Failure: f}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*n.cfg.LeaderWait)
	defer cancel()
	v, idx, err := n.applyLocal(ctx, cmd)
	if isClusterErr(err) {
		return rpcReply{Failure: failureOf(err), Index: idx}
	}
	n.nudgeFollowers()
	if n.cfg.Codec == nil {
		return rpcReply{Failure: "no result codec"}
	}
	b, cerr := n.cfg.Codec.EncodeResult(v, err)
	if cerr != nil {
		return rpcReply{Failure: cerr.Error(), Index: idx}
	}
	return rpcReply{Index: idx, Result: b}
}

func isClusterErr(err error) bool {
	return errors.Is(err, ErrNoLeader) || errors.Is(err, ErrIndeterminate) || errors.Is(err, ErrShutdown) ||
		errors.Is(err, ErrDiskFull) || errors.Is(err, ErrStalled)
}

// call sends one RPC to the current leader, following leadership changes
// until ctx ends.
func (n *Node) call(ctx context.Context, kind byte, body []byte) (rpcReply, error) {
	if n.sl == nil {
		return rpcReply{}, ErrNoLeader
	}
	for {
		addr, _ := n.raft.LeaderWithID()
		if addr != "" && string(addr) != string(n.trans.LocalAddr()) {
			reply, err := n.callAddr(ctx, string(addr), kind, body)
			if err == nil && !reply.NotLeader {
				return reply, nil
			}
			if err != nil && (kind == connForward || kind == connTraced || kind == connTransfer) && errors.Is(err, errSent) {
				// The leader may have applied it: never resend blindly.
				return rpcReply{}, ErrIndeterminate
			}
		}
		if n.IsLeader() {
			return rpcReply{NotLeader: true}, nil
		}
		select {
		case <-ctx.Done():
			return rpcReply{}, ErrNoLeader
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var errSent = errors.New("cluster: request sent, no answer")

func (n *Node) callAddr(ctx context.Context, addr string, kind byte, body []byte) (rpcReply, error) {
	var reply rpcReply
	c, err := n.pool.get(addr, kind, func() (net.Conn, error) { return n.sl.dialKind(addr, kind, 2*time.Second) })
	if err != nil {
		return reply, err
	}
	deadline := time.Now().Add(3 * n.applyWait(ctx))
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	if err := frame.Write(c, body); err != nil {
		c.Close()
		return reply, fmt.Errorf("%w: %v", errSent, err)
	}
	b, err := frame.Read(c, maxFrame)
	if err != nil {
		c.Close()
		return reply, fmt.Errorf("%w: %v", errSent, err)
	}
	c.SetDeadline(time.Time{})
	if kind == connForward {
		n.pool.put(addr, c)
	} else {
		c.Close()
	}
	return reply, json.Unmarshal(b, &reply)
}

// connPool keeps idle forwarding connections per leader address, so a
// forwarded write costs one round trip instead of a TCP and cluster-key
// handshake.
type connPool struct {
	mu   sync.Mutex
	idle map[string][]pooledConn
}

type pooledConn struct {
	net.Conn
	since time.Time
}

func (p *connPool) get(addr string, kind byte, dial func() (net.Conn, error)) (net.Conn, error) {
	if kind == connForward {
		p.mu.Lock()
		for len(p.idle[addr]) > 0 {
			l := p.idle[addr]
			pc := l[len(l)-1]
			p.idle[addr] = l[:len(l)-1]
			if time.Since(pc.since) < poolIdle && stillOpen(pc.Conn) {
				p.mu.Unlock()
				return pc.Conn, nil
			}
			pc.Close()
		}
		p.mu.Unlock()
	}
	return dial()
}

func (p *connPool) put(addr string, c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle == nil {
		p.idle = map[string][]pooledConn{}
	}
	if len(p.idle[addr]) >= 64 {
		c.Close()
		return
	}
	p.idle[addr] = append(p.idle[addr], pooledConn{c, time.Now()})
}

func (p *connPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for a, l := range p.idle {
		for _, pc := range l {
			pc.Close()
		}
		delete(p.idle, a)
	}
}

// addServer adds (or re-adds at a new address) a voter or non-voter.
// Joining is idempotent.
func (n *Node) addServer(j JoinRequest) error {
	if j.ID == "" || j.Addr == "" {
		return errors.New("join needs an id and an address")
	}
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == raft.ServerID(j.ID) {
			if string(s.Address) == j.Addr && (s.Suffrage == raft.Voter) == j.Voter && !j.Reseed {
				return nil
			}
			if err := n.raft.RemoveServer(s.ID, 0, 10*time.Second).Error(); err != nil {
				return err
			}
		}
	}
	if j.Voter {
		return n.raft.AddVoter(raft.ServerID(j.ID), raft.ServerAddress(j.Addr), 0, 10*time.Second).Error()
	}
	return n.raft.AddNonvoter(raft.ServerID(j.ID), raft.ServerAddress(j.Addr), 0, 10*time.Second).Error()
}
