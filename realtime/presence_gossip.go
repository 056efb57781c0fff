package realtime

import (
	"encoding/json"
	"time"
)

// Presence gossip. Each node owns its presences and numbers its changes
// (Version, counting from 1 in each incarnation, the epoch). It sends
// them to every other node as deltas covering versions (From, To], and a
// heartbeat with the last version sent every heartbeatEvery. A receiver
// applies an entry only when it is newer than what it holds for that
// connection (messages may arrive out of order); when it sees a gap in
// the versions, an unknown epoch, or a heartbeat ahead of what it has,
// it asks the owner for its full state. memberlist's push/pull exchange
// carries full states too, as a backstop. A node that memberlist reports
// dead or gone takes its presences with it.

// Gossip is what presence needs of the cluster (cluster.Node).
type Gossip interface {
	GossipSend(nodeID string, msg []byte) error
	GossipBroadcast(msg []byte)
}

// heartbeatEvery is how often a node announces its last sent version.
const heartbeatEvery = 2 * time.Second

// askEvery bounds full-state requests to one owner.
const askEvery = time.Second

// Wire message types.
const (
	wireDelta     = "d"
	wireFull      = "f"
	wireHeartbeat = "h"
	wireSync      = "s"
)

type wireMsg struct {
	Type    string      `json:"t"`
	Node    string      `json:"n"`
	Epoch   int64       `json:"e"`
	From    uint64      `json:"f,omitempty"`
	Version uint64      `json:"v"`
	Entries []presEntry `json:"x,omitempty"`
}

// origin is another node's presences as this node knows them.
type origin struct {
	epoch   int64
	applied uint64 // every change up to this version is reflected
	floor   uint64 // the last full state's version: older entries are stale
	entries presSet
	tombs   map[[2]string]uint64 // leaves newer than the entries they end
	asked   time.Time
	// gone: memberlist reported the node dead or left; its messages
	// still in flight are ignored until it is seen alive again.
	gone bool
}

// Attach starts gossiping presences as node self through g, and returns
// the presence registry, which the cluster then hands gossip to
// (cluster.Node.SetGossipHandler).
func (p *Presence) Attach(self string, g Gossip) *Presence {
	p.mu.Lock()
	p.self, p.gossip = self, g
	p.mu.Unlock()
	go p.sendLoop()
	return p
}

// Close stops the gossip loops.
func (p *Presence) Close() { p.once.Do(func() { close(p.stop) }) }

func (p *Presence) sendLoop() {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-p.kick:
			p.mu.Lock()
			msg := wireMsg{Type: wireDelta, Node: p.self, Epoch: p.epoch, From: p.sent, Version: p.version, Entries: p.pending}
			p.pending, p.sent = nil, p.version
			p.mu.Unlock()
			if len(msg.Entries) > 0 {
				p.broadcast(msg)
			}
		case <-t.C:
			p.mu.Lock()
			msg := wireMsg{Type: wireHeartbeat, Node: p.self, Epoch: p.epoch, Version: p.sent}
			p.mu.Unlock()
			p.broadcast(msg)
		}
	}
}

func (p *Presence) broadcast(m wireMsg) {
	if b, err := json.Marshal(m); err == nil {
		p.gossip.GossipBroadcast(b)
	}
}

func (p *Presence) send(node string, m wireMsg) {
	if b, err := json.Marshal(m); err == nil {
		go func() { _ = p.gossip.GossipSend(node, b) }()
	}
}

// fullLocked is this node's whole state, as of its latest version.
func (p *Presence) fullLocked() wireMsg {
	m := wireMsg{Type: wireFull, Node: p.self, Epoch: p.epoch, Version: p.version}
	for _, conns := range p.local {
		for _, e := range conns {
			m.Entries = append(m.Entries, *e)
		}
	}
	return m
}

// GossipMessage handles a message from another node.
func (p *Presence) GossipMessage(b []byte) {
	var m wireMsg
	if json.Unmarshal(b, &m) != nil || m.Node == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.Node == p.self {
		return
	}
	switch m.Type {
	case wireSync:
		p.send(m.Node, p.fullLocked())
		return
	case wireDelta, wireFull, wireHeartbeat:
	default:
		return
	}
	o := p.originLocked(m.Node, m.Epoch)
	if o == nil || o.gone {
		return // an older incarnation, or a node gone
	}
	switch m.Type {
	case wireDelta:
		for i := range m.Entries {
			p.applyLocked(o, &m.Entries[i], false)
		}
		if m.From <= o.applied {
			o.applied = max(o.applied, m.Version)
		} else {
			p.askLocked(m.Node, o)
		}
	case wireFull:
		p.mergeFullLocked(o, m)
	case wireHeartbeat:
		if m.Version > o.applied {
			p.askLocked(m.Node, o)
		}
	}
}

// GossipLocalState is memberlist's push/pull payload: the full state.
func (p *Presence) GossipLocalState() []byte {
	p.mu.Lock()
	m := p.fullLocked()
	p.mu.Unlock()
	b, _ := json.Marshal(m)
	return b
}

// GossipMergeState merges another node's push/pull payload.
func (p *Presence) GossipMergeState(b []byte) { p.GossipMessage(b) }

// GossipNodeJoined: a node came (back): exchange full states.
func (p *Presence) GossipNodeJoined(node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.origins[node]; o != nil && o.gone {
		delete(p.origins, node)
	}
	p.send(node, p.fullLocked())
	p.send(node, wireMsg{Type: wireSync, Node: p.self, Epoch: p.epoch})
}

// GossipNodeLeft: a node left, died or was cut off: its presences leave.
func (p *Presence) GossipNodeLeft(node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o := p.origins[node]; o != nil {
		p.dropOriginLocked(o)
		o.gone = true
	} else {
		p.origins[node] = &origin{gone: true, entries: presSet{}, tombs: map[[2]string]uint64{}}
	}
}

// originLocked is node's origin in incarnation epoch: a newer epoch
// replaces the older one's presences (they leave) and is not gone; nil
// for an older one.
func (p *Presence) originLocked(node string, epoch int64) *origin {
	o := p.origins[node]
	if o != nil && (epoch < o.epoch || (o.gone && epoch == o.epoch)) {
		return nil
	}
	if o == nil || epoch > o.epoch {
		if o != nil {
			p.dropOriginLocked(o)
		}
		o = &origin{epoch: epoch, entries: presSet{}, tombs: map[[2]string]uint64{}}
		p.origins[node] = o
	}
	return o
}

func (p *Presence) dropOriginLocked(o *origin) {
	for ch, conns := range o.entries {
		for _, e := range conns {
			p.emitLocked(ch, "leave", e.Meta, nil)
		}
	}
	o.entries = presSet{}
}

func (p *Presence) askLocked(node string, o *origin) {
	now := p.clock()
	if now.Sub(o.asked) < askEvery {
		return
	}
	o.asked = now
	p.send(node, wireMsg{Type: wireSync, Node: p.self, Epoch: p.epoch})
}

// applyLocked applies one gossiped entry if it is newer than what the
// origin holds for its connection (and, for a delta, than its last full
// state), and tells the observers.
func (p *Presence) applyLocked(o *origin, e *presEntry, fromFull bool) {
	if e.Channel == "" || e.Conn == "" || (e.Meta != nil && e.Meta.ConnID != e.Conn) {
		return
	}
	if !fromFull && e.Version <= o.floor {
		return
	}
	k := [2]string{e.Channel, e.Conn}
	cur := o.entries.get(e.Channel, e.Conn)
	if (cur != nil && cur.Version >= e.Version) || o.tombs[k] >= e.Version {
		return
	}
	if e.Meta == nil {
		o.tombs[k] = e.Version
		if cur != nil {
			o.entries.del(e.Channel, e.Conn)
			p.emitLocked(e.Channel, "leave", cur.Meta, nil)
		}
		return
	}
	ne := *e
	o.entries.put(&ne)
	switch {
	case cur == nil:
		p.emitLocked(e.Channel, "join", ne.Meta, nil)
	case cur.Meta.Key != ne.Meta.Key:
		p.emitLocked(e.Channel, "leave", cur.Meta, nil)
		p.emitLocked(e.Channel, "join", ne.Meta, nil)
	default:
		p.emitLocked(e.Channel, "update", ne.Meta, nil)
	}
}

// mergeFullLocked reconciles an origin with its full state at m.Version:
// what the origin held up to that version and is not in it has left.
func (p *Presence) mergeFullLocked(o *origin, m wireMsg) {
	if m.Version < o.floor {
		return // older than a full state already merged
	}
	in := map[[2]string]bool{}
	for _, e := range m.Entries {
		in[[2]string{e.Channel, e.Conn}] = true
	}
	for ch, conns := range o.entries {
		for conn, e := range conns {
			if e.Version <= m.Version && !in[[2]string{ch, conn}] {
				o.entries.del(ch, conn)
				p.emitLocked(ch, "leave", e.Meta, nil)
			}
		}
	}
	for k, v := range o.tombs {
		if v <= m.Version {
			delete(o.tombs, k)
		}
	}
	for i := range m.Entries {
		p.applyLocked(o, &m.Entries[i], true)
	}
	o.floor = max(o.floor, m.Version)
	o.applied = max(o.applied, m.Version)
}
