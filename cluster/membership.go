package cluster

import (
	"errors"
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
	// ErrNotLeaderHere means a membership change must be sent to the leader.
	ErrNotLeaderHere = errors.New("cluster: membership changes are made on the leader")
	// ErrNoSuchMember names a server that is not in the configuration.
	ErrNoSuchMember = errors.New("cluster: no such member")
	// ErrAlreadyLeader is a transfer of leadership to the leader itself.
	ErrAlreadyLeader = errors.New("cluster: this node already leads")
)

// RemoveServer takes a member out of the configuration (leader only).
func (n *Node) RemoveServer(id string) error {
	if !n.IsLeader() {
		return ErrNotLeaderHere
	}
	return n.raft.RemoveServer(raft.ServerID(id), 0, 10*time.Second).Error()
}

// AddServer adds a voter or a non-voter (leader only; idempotent).
func (n *Node) AddServer(id, addr string, voter bool) error {
	if !n.IsLeader() {
		return ErrNotLeaderHere
	}
	return n.addServer(JoinRequest{ID: id, Addr: addr, Voter: voter})
}

// TransferLeadership hands leadership to id, or to the most current voter
// when id is empty (leader only).
func (n *Node) TransferLeadership(id string) error {
	if !n.IsLeader() {
		return ErrNotLeaderHere
	}
	if id == n.cfg.NodeID {
		return ErrAlreadyLeader
	}
	transfer := func(f raft.Future) error {
		err := f.Error()
		if errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return ErrNoLeader
		}
		return err
	}
	if id == "" {
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
