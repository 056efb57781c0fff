package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
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
	ml      *memberlist.Memberlist
	meta    []byte
	self    string
	handler atomic.Pointer[GossipHandler]
}

// NodeMeta, NotifyMsg, GetBroadcasts, LocalState and MergeRemoteState
// implement memberlist.Delegate: the metadata, plus the application's
// messages and push/pull state handed to the GossipHandler.
func (g *gossip) NodeMeta(limit int) []byte {
	if len(g.meta) > limit {
		return nil
	}
	return g.meta
}

func (g *gossip) NotifyMsg(b []byte) {
	if h := g.handler.Load(); h != nil {
		// memberlist reuses nothing it hands over, but the handler may
		// keep the bytes: they are its own.
		(*h).GossipMessage(b)
	}
}

func (g *gossip) GetBroadcasts(overhead, limit int) [][]byte { return nil }

func (g *gossip) LocalState(join bool) []byte {
	if h := g.handler.Load(); h != nil {
		return (*h).GossipLocalState()
	}
	return nil
}

func (g *gossip) MergeRemoteState(buf []byte, join bool) {
	if h := g.handler.Load(); h != nil && len(buf) > 0 {
		(*h).GossipMergeState(buf)
	}
}

// NotifyJoin, NotifyLeave and NotifyUpdate implement
// memberlist.EventDelegate: the handler hears of other nodes coming and
// going (a node that dies or is cut off "leaves").
func (g *gossip) NotifyJoin(n *memberlist.Node) {
	if h := g.handler.Load(); h != nil && n.Name != g.self {
		(*h).GossipNodeJoined(n.Name)
	}
}

func (g *gossip) NotifyLeave(n *memberlist.Node) {
	if h := g.handler.Load(); h != nil && n.Name != g.self {
		(*h).GossipNodeLeft(n.Name)
	}
}

func (g *gossip) NotifyUpdate(*memberlist.Node) {}

// GossipHandler is the application's side of gossip (realtime presence):
// state that lives in memory on the node holding it and is not in the
// log. Calls come from memberlist's goroutines, concurrently.
type GossipHandler interface {
	// GossipMessage is a message another node sent with GossipSend or
	// GossipBroadcast.
	GossipMessage(msg []byte)
	// GossipLocalState and GossipMergeState are memberlist's periodic
	// full-state exchange between two nodes (anti-entropy).
	GossipLocalState() []byte
	GossipMergeState(buf []byte)
	// GossipNodeJoined and GossipNodeLeft report other nodes becoming
	// reachable, and leaving, dying or being cut off.
	GossipNodeJoined(nodeID string)
	GossipNodeLeft(nodeID string)
}

// SetGossipHandler routes gossip to h (no-op without gossip).
func (n *Node) SetGossipHandler(h GossipHandler) {
	if n.gossip != nil {
		n.gossip.handler.Store(&h)
	}
}

// GossipSend sends msg to one node over gossip's reliable (TCP) channel.
func (n *Node) GossipSend(nodeID string, msg []byte) error {
	if n.gossip == nil {
		return errors.New("cluster: gossip is off")
	}
	for _, m := range n.gossip.ml.Members() {
		if m.Name == nodeID && m.State == memberlist.StateAlive {
			return n.gossip.ml.SendReliable(m, msg)
		}
	}
	return fmt.Errorf("cluster: gossip: node %q is not reachable", nodeID)
}

// GossipBroadcast sends msg to every other live node, each in its own
// goroutine (a slow or dying node delays nobody); delivery is best effort.
func (n *Node) GossipBroadcast(msg []byte) {
	if n.gossip == nil {
		return
	}
	for _, m := range n.gossip.ml.Members() {
		if m.Name == n.gossip.self || m.State != memberlist.StateAlive {
			continue
		}
		go func(m *memberlist.Node) { _ = n.gossip.ml.SendReliable(m, msg) }(m)
	}
}

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
	g := &gossip{meta: meta, self: n.cfg.NodeID}
	// LAN timings: a dead node is noticed within seconds (presence needs
	// that); the probe and TCP timeouts still allow cross-region latency.
	c := memberlist.DefaultLANConfig()
	c.ProbeTimeout = time.Second
	c.Name = n.cfg.NodeID
	c.BindAddr, c.BindPort = host, port
	c.AdvertiseAddr, c.AdvertisePort = host, port
	c.SecretKey = DeriveKey(n.cfg.ClusterKey, "gossip")
	c.Delegate = g
	c.Events = g
	// Push/pull full-state exchange: the anti-entropy behind presence.
	c.PushPullInterval = 15 * time.Second
	c.Logger = n.libs.Memberlist()
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

// gossipHTTPAddr is the HTTP address member id gossips ("" without
// gossip or when the ring does not know it).
func (n *Node) gossipHTTPAddr(id string) string {
	if n.gossip == nil {
		return ""
	}
	for _, m := range n.gossip.ml.Members() {
		if m.Name == id {
			var meta gossipMeta
			if json.Unmarshal(m.Meta, &meta) == nil {
				return meta.HTTPAddr
			}
		}
	}
	return ""
}

func (n *Node) stopGossip() {
	if n.gossip != nil {
		n.gossip.ml.Leave(time.Second)
		n.gossip.ml.Shutdown()
	}
}
