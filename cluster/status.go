package cluster

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"svcd/cluster/frame"
)

// Status is what a member reports about itself.
type Status struct {
	NodeID       string `json:"node_id"`
	HTTPAddr     string `json:"http_addr"`
	Region       string `json:"region"`
	State        string `json:"state"`
	AppliedIndex uint64 `json:"applied_index"`
	LastContact  int64  `json:"last_contact_ms"`
	GossipAddr   string `json:"gossip_addr,omitempty"`
	// Gossip is this member's liveness as the gossip ring sees it
	// (alive, suspect, dead), when gossip runs.
	Gossip string `json:"-"`
	// Storage is its free space and whether its state machine stopped.
	Storage StorageStatus `json:"storage"`
}

// LocalStatus describes this node.
func (n *Node) LocalStatus() Status {
	return Status{
		NodeID: n.cfg.NodeID, HTTPAddr: n.cfg.HTTPAddr, Region: n.cfg.Region, State: n.State(),
		AppliedIndex: n.sm.AppliedIndex(), LastContact: n.LastContact().Milliseconds(),
		GossipAddr: n.cfg.GossipAddr, Storage: n.Storage(),
	}
}

// statusOf asks one member for its status.
func (n *Node) statusOf(s Server, timeout time.Duration) (Status, bool) {
	var st Status
	if n.sl == nil {
		return st, false
	}
	c, err := n.sl.dialKind(s.Addr, connStatus, timeout)
	if err != nil {
		return st, false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if frame.Write(c, []byte("{}")) != nil {
		return st, false
	}
	b, err := frame.Read(c, maxFrame)
	if err != nil || json.Unmarshal(b, &st) != nil {
		return st, false
	}
	if st.HTTPAddr != "" {
		n.httpAddrs.Store(s.ID, st.HTTPAddr)
	}
	return st, true
}

// MemberStatus asks every member for its status over the authenticated
// channel, in parallel; a member that does not answer within the timeout
// is missing from the map (dead or unreachable). With gossip, each status
// also carries the ring's view of that member.
func (n *Node) MemberStatus(ctx context.Context, timeout time.Duration) map[string]Status {
	out := map[string]Status{n.cfg.NodeID: n.LocalStatus()}
	servers, err := n.Servers()
	if err != nil || n.sl == nil {
		return out
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range servers {
		if s.ID == n.cfg.NodeID {
			continue
		}
		wg.Add(1)
		go func(s Server) {
			defer wg.Done()
			if st, ok := n.statusOf(s, timeout); ok {
				mu.Lock()
				out[s.ID] = st
				mu.Unlock()
			}
		}(s)
	}
	wg.Wait()
	states := n.gossipStates()
	for id, st := range out {
		st.Gossip = states[id]
		out[id] = st
	}
	return out
}
