package cluster

import (
	"time"

	"github.com/hashicorp/raft"
)

// watchLeader learns the HTTP address of each new leader as soon as this
// node hears of it (one status request per election), so that a
// membership change that cannot reach the leader later can still name
// where it serves HTTP (api: the 409's leader_http_addr), without gossip.
func (n *Node) watchLeader(stop <-chan struct{}) {
	ch := make(chan raft.Observation, 8)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	n.raft.RegisterObserver(obs)
	defer n.raft.DeregisterObserver(obs)
	for {
		select {
		case <-stop:
			return
		case o := <-ch:
			lo := o.Data.(raft.LeaderObservation)
			if id := string(lo.LeaderID); id != "" && id != n.cfg.NodeID && lo.LeaderAddr != "" {
				n.statusOf(Server{ID: id, Addr: string(lo.LeaderAddr)}, time.Second) // remembers its address
			}
		}
	}
}
