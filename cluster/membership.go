package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Server is one member of the Raft configuration.
type Server struct {
	ID    string
	Addr  string
	Voter bool
}

// Servers lists the Raft configuration.
func (n *Node) Servers() ([]Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return nil, ErrNoLeader
		}
		return nil, err
	}
	var out []Server
	for _, s := range f.Configuration().Servers {
		out = append(out, Server{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	return out, nil
}

var (
	// ErrNoSuchMember names a server that is not in the configuration.
	ErrNoSuchMember = errors.New("cluster: no such member")
	// ErrAlreadyLeader is a transfer of leadership to the leader itself.
	ErrAlreadyLeader = errors.New("cluster: this node already leads")
	// ErrNotForwarded means the leader did not take a forwarded
	// membership change: it runs an older version that does not know
	// the request. Send the change to the leader itself.
	ErrNotForwarded = errors.New("cluster: the leader does not take forwarded membership changes (an older version)")
	// ErrTransferInProgress means another leadership transfer is under
	// way.
	ErrTransferInProgress = errors.New("cluster: a leadership transfer is already in progress")
	// ErrTransferFailed means the leader could not hand leadership over
	// (the target did not take it in time, or could not be reached): the
	// leader keeps leading. It wraps the leader's reason.
	ErrTransferFailed = errors.New("cluster: leadership transfer failed")
	// ErrNoOtherVoter is a transfer without a target on a cluster whose
	// leader is its only voter.
	ErrNoOtherVoter = errors.New("cluster: no other voter to hand leadership to")
	// ErrTransferTimeout means the transfer was made, or may have been,
	// but this node learned of no new leader within TransferWait.
	ErrTransferTimeout = errors.New("cluster: no new leader known after the leadership transfer")
)

// TransferWait bounds how long TransferLeadership waits, once the leader
// has handed leadership over, for this node to know the new leader.
const TransferWait = 5 * time.Second

// AddServer adds a voter or a non-voter (idempotent). On a follower the
// change is forwarded to the leader; ErrNoLeader when no leader answered
// within the leader wait.
func (n *Node) AddServer(ctx context.Context, id, addr string, voter bool) error {
	_, err := n.forwardChange(ctx, connMember, memberChange{Op: opAdd, ID: id, Addr: addr, Voter: voter})
	return err
}

// RemoveServer takes a member out of the configuration; on a follower the
// change is forwarded to the leader, as AddServer's.
func (n *Node) RemoveServer(ctx context.Context, id string) error {
	_, err := n.forwardChange(ctx, connMember, memberChange{Op: opRemove, ID: id})
	return err
}

// Transfer is the outcome of a leadership transfer: the member that led
// and the one that leads now, as this node knows them.
type Transfer struct {
	Previous string
	Leader   Leader
}

// TransferLeadership hands leadership to id, or to the most current voter
// when id is empty; on a follower the request is forwarded to the leader.
// It returns once this node knows the new leader (at most TransferWait
// after the leader handed over; ErrTransferTimeout after that).
func (n *Node) TransferLeadership(ctx context.Context, id string) (Transfer, error) {
	from, err := n.forwardChange(ctx, connTransfer, memberChange{Op: opTransfer, ID: id})
	if err != nil && !errors.Is(err, ErrIndeterminate) {
		return Transfer{Previous: from}, err
	}
	// Made, or perhaps made (the leader took the request but its answer
	// was lost): a new leader shows which.
	wctx, cancel := context.WithTimeout(ctx, TransferWait)
	defer cancel()
	for {
		if l := n.LeaderID(); l != "" && l != from {
			return Transfer{Previous: from, Leader: n.leaderInfo(wctx, l)}, nil
		}
		select {
		case <-wctx.Done():
			return Transfer{Previous: from}, ErrTransferTimeout
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// transferHere hands leadership over from this node, which leads.
func (n *Node) transferHere(id string) error {
	if id == n.cfg.NodeID {
		return ErrAlreadyLeader
	}
	transfer := func(f raft.Future) error {
		err := f.Error()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, raft.ErrLeadershipTransferInProgress):
			return ErrTransferInProgress
		case errors.Is(err, raft.ErrNotLeader):
			return ErrNoLeader
		case errors.Is(err, raft.ErrRaftShutdown):
			return ErrShutdown
		}
		return fmt.Errorf("%w: %v", ErrTransferFailed, err)
	}
	if id == "" {
		if n.otherVoters() == 0 {
			return ErrNoOtherVoter
		}
		n.libs.HandOver() // raft's "peer has newer term" is then expected
		return transfer(n.raft.LeadershipTransfer())
	}
	servers, err := n.Servers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		if s.ID == id {
			if !s.Voter {
				return ErrNoSuchMember
			}
			n.libs.HandOver()
			return transfer(n.raft.LeadershipTransferToServer(raft.ServerID(id), raft.ServerAddress(s.Addr)))
		}
	}
	return ErrNoSuchMember
}

// LastContact is how long ago this node heard from the leader (0 on the
// leader).
func (n *Node) LastContact() time.Duration {
	if n.IsLeader() {
		return 0
	}
	return time.Since(n.raft.LastContact())
}
