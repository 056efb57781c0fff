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
		return nil, err
	}
	var out []Server
	for _, s := range f.Configuration().Servers {
		out = append(out, Server{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	return out, nil
}

// ErrNotLeaderHere means a membership change must be sent to the leader.
var ErrNotLeaderHere = errors.New("cluster: membership changes are made on the leader")

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
	if id == "" {
		return n.raft.LeadershipTransfer().Error()
	}
	servers, err := n.Servers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		if s.ID == id {
			return n.raft.LeadershipTransferToServer(raft.ServerID(id), raft.ServerAddress(s.Addr)).Error()
		}
	}
	return errors.New("cluster: no member " + id)
}

// LastContact is how long ago this node heard from the leader (0 on the
// leader).
func (n *Node) LastContact() time.Duration {
	if n.IsLeader() {
		return 0
	}
	return time.Since(n.raft.LastContact())
}
