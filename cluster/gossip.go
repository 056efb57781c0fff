package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// Gossip (hashicorp/memberlist) carries what is not in the log: which
// nodes are alive, suspect or dead, and their metadata. It never changes
// Raft membership: voters change only through explicit operations. Its
// traffic is encrypted with a key derived from the cluster key.

// gossipMeta is the metadata every node gossips about itself.
type gossipMeta struct {
	RaftAddr string `json:"raft"`
	HTTPAddr string `json:"http"`
	Region   string `json:"region,omitempty"`
}

type gossip struct {
	ml   *memberlist.Memberlist
	meta []byte
}

// NodeMeta, NotifyMsg, GetBroadcasts, LocalState and MergeRemoteState
// implement memberlist.Delegate; only the metadata is used for now.
func (g *gossip) NodeMeta(limit int) []byte {
	if len(g.meta) > limit {
		return nil
	}
	return g.meta
}
func (g *gossip) NotifyMsg([]byte)                           {}
func (g *gossip) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (g *gossip) LocalState(join bool) []byte                { return nil }
func (g *gossip) MergeRemoteState(buf []byte, join bool)     {}

// startGossip binds memberlist on the configured address.
func (n *Node) startGossip() error {
	host, portText, err := net.SplitHostPort(n.cfg.GossipAddr)
	if err != nil {
		return fmt.Errorf("cluster: gossip address: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("cluster: gossip port: %w", err)
	}
	meta, _ := json.Marshal(gossipMeta{RaftAddr: n.cfg.RaftAddr, HTTPAddr: n.cfg.HTTPAddr, Region: n.cfg.Region})
	g := &gossip{meta: meta}
	// LAN timings: a dead node is noticed within seconds (presence needs
	// that); the probe and TCP timeouts still allow cross-region latency.
	c := memberlist.DefaultLANConfig()
	c.ProbeTimeout = time.Second
	c.Name = n.cfg.NodeID
	c.BindAddr, c.BindPort = host, port
	c.AdvertiseAddr, c.AdvertisePort = host, port
	c.SecretKey = DeriveKey(n.cfg.ClusterKey, "gossip")
	c.Delegate = g
	c.Logger = log.New(io.Discard, "", 0)
	ml, err := memberlist.Create(c)
	if err != nil {
		return fmt.Errorf("cluster: gossip: %w", err)
	}
	g.ml = ml
	n.gossip = g
	go n.gossipJoinLoop()
	return nil
}

// gossipJoinLoop keeps the gossip ring joined to the Raft members: every
// few seconds it asks the members it does not see for their gossip
// address (through the status RPC) and joins them.
func (n *Node) gossipJoinLoop() {
	for !n.closing.Load() {
		known := map[string]bool{}
		for _, m := range n.gossip.ml.Members() {
			known[m.Name] = true
		}
		if servers, err := n.Servers(); err == nil {
			var seeds []string
			for _, s := range servers {
				if !known[s.ID] {
					if st, ok := n.statusOf(s, time.Second); ok && st.GossipAddr != "" {
						seeds = append(seeds, st.GossipAddr)
					}
				}
			}
			if len(seeds) > 0 {
				n.gossip.ml.Join(seeds)
			}
		}
		time.Sleep(3 * time.Second)
	}
}

// GossipStates maps node ids to the gossip ring's view of them: alive,
// suspect or dead (empty without gossip).
func (n *Node) GossipStates() map[string]string { return n.gossipStates() }

func (n *Node) gossipStates() map[string]string {
	out := map[string]string{}
	if n.gossip == nil {
		return out
	}
	for _, m := range n.gossip.ml.Members() {
		switch m.State {
		case memberlist.StateAlive:
			out[m.Name] = "alive"
		case memberlist.StateSuspect:
			out[m.Name] = "suspect"
		default:
			out[m.Name] = "dead"
		}
	}
	return out
}

func (n *Node) stopGossip() {
	if n.gossip != nil {
		n.gossip.ml.Leave(time.Second)
		n.gossip.ml.Shutdown()
	}
}
