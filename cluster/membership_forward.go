package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Membership changes from any node. Like a write, a change sent to a
// follower is forwarded to the leader over the authenticated channel
// ('M' adds or removes a server, 'T' transfers leadership) and the answer
// is the leader's. An add or a remove may be sent again after a lost
// answer (adding is idempotent, removing an absent server changes
// nothing); a transfer is not: a lost answer leaves it to the caller to
// see whether a new leader appears (TransferLeadership).

// The operations a memberChange carries.
const (
	opAdd      = "add"
	opRemove   = "remove"
	opTransfer = "transfer"
)

// memberChange is one membership operation, forwarded as JSON.
type memberChange struct {
	Op    string `json:"op"`
	ID    string `json:"id,omitempty"`
	Addr  string `json:"addr,omitempty"`
	Voter bool   `json:"voter,omitempty"`
}

// forwardChange carries c out on the leader, this node or the one it
// forwards to, within the leader wait. It returns the id of the leader
// that carried it out (or, when that is unknown, the one it was sent
// to). When no leader answered in time the error is a *NoLeaderError
// naming the leader this node last tried, if it knew one.
func (n *Node) forwardChange(ctx context.Context, kind byte, c memberChange) (string, error) {
	wctx, cancel := context.WithTimeout(ctx, n.cfg.LeaderWait)
	defer cancel()
	tried := ""
	for {
		if n.IsLeader() {
			return n.cfg.NodeID, n.applyChange(c)
		}
		if n.sl == nil {
			return "", &NoLeaderError{Leader: n.LeaderID()} // nothing to forward over
		}
		if leader := n.LeaderID(); leader != "" {
			tried = leader
			body, _ := json.Marshal(c)
			reply, err := n.call(wctx, kind, body)
			if errors.Is(err, ErrNoLeader) {
				return leader, &NoLeaderError{Leader: leader}
			}
			if err != nil {
				return leader, err
			}
			if !reply.NotLeader {
				if reply.Leader != "" {
					leader = reply.Leader
				}
				return leader, failureErr(reply.Failure)
			}
			continue // this node leads now
		}
		select {
		case <-wctx.Done():
			return tried, &NoLeaderError{Leader: tried}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// NoLeaderError is ErrNoLeader for a membership change: no leader took it
// within the leader wait. Leader is the leader this node tried to reach
// ("" when it knew none).
type NoLeaderError struct {
	Leader string
}

func (e *NoLeaderError) Error() string {
	if e.Leader == "" {
		return ErrNoLeader.Error()
	}
	return ErrNoLeader.Error() + " (leader " + e.Leader + " did not answer)"
}

func (e *NoLeaderError) Unwrap() error { return ErrNoLeader }

// applyChange carries c out on this node, which leads.
func (n *Node) applyChange(c memberChange) error {
	switch c.Op {
	case opAdd:
		if c.ID == "" || c.Addr == "" {
			return fmt.Errorf("cluster: an add needs an id and an address")
		}
		return raftChangeErr(n.addServer(JoinRequest{ID: c.ID, Addr: c.Addr, Voter: c.Voter}))
	case opRemove:
		return raftChangeErr(n.raft.RemoveServer(raft.ServerID(c.ID), 0, 10*time.Second).Error())
	case opTransfer:
		return n.transferHere(c.ID)
	}
	return fmt.Errorf("cluster: unknown membership change %q", c.Op)
}

// raftChangeErr names raft's refusals of a configuration change with the
// cluster's errors: a leader that lost its role before the change was
// appended did not make it (ErrNoLeader); one that lost it after may
// have (ErrIndeterminate).
func raftChangeErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress),
		errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrNoLeader
	case errors.Is(err, raft.ErrLeadershipLost):
		return ErrIndeterminate
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShutdown
	}
	return err
}

// serveChange answers a forwarded membership change on the leader.
func (n *Node) serveChange(req []byte) rpcReply {
	var c memberChange
	if err := json.Unmarshal(req, &c); err != nil {
		return rpcReply{Failure: "bad membership change"}
	}
	return rpcReply{Leader: n.cfg.NodeID, Failure: failureOf(n.applyChange(c))}
}

// Leader is a member as a client would reach it: its id and HTTP address
// ("" when unknown).
type Leader struct {
	ID       string
	HTTPAddr string
}

func (n *Node) leaderInfo(ctx context.Context, id string) Leader {
	if id == "" {
		return Leader{}
	}
	return Leader{ID: id, HTTPAddr: n.MemberHTTPAddr(ctx, id)}
}

// MemberHTTPAddr is member id's HTTP address ("" when unknown): this
// node's own from its configuration, another's from gossip, else the
// address it last reported (leader_watch.go learns the leader's at each
// election; GET /admin/cluster learns everyone's), else from asking it
// (bounded by ctx and one second).
func (n *Node) MemberHTTPAddr(ctx context.Context, id string) string {
	return n.httpAddrOf(ctx, id)
}

// httpAddrOf finds member id's HTTP address (see MemberHTTPAddr).
func (n *Node) httpAddrOf(ctx context.Context, id string) string {
	if id == n.cfg.NodeID {
		return n.cfg.HTTPAddr
	}
	if a := n.gossipHTTPAddr(id); a != "" {
		return a
	}
	if a, ok := n.httpAddrs.Load(id); ok {
		return a.(string)
	}
	servers, err := n.Servers()
	if err != nil {
		return ""
	}
	timeout := time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	for _, s := range servers {
		if s.ID == id && timeout > 0 {
			if st, ok := n.statusOf(s, timeout); ok {
				return st.HTTPAddr
			}
		}
	}
	return ""
}
