package realtime

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"svcd/engine"
)

// Presence limits.
const (
	// MaxPresenceState bounds a presence's state (SPEC.md: 4 KB).
	MaxPresenceState = 4096
	maxChannelLen    = 1024
	maxKeyLen        = 256
)

// Identity is who a presence belongs to, set by the server.
type Identity struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// IdentityOf is p's identity: {id, type} for an admin or a user, nil for
// anonymous.
func IdentityOf(p engine.Principal) *Identity {
	switch p.Kind {
	case engine.AdminPrincipal:
		return &Identity{ID: p.ID, Type: "admin"}
	case engine.User:
		return &Identity{ID: p.ID, Type: "user"}
	}
	return nil
}

// Meta is one connection's presence on a channel (SPEC.md "Presence
// meta").
type Meta struct {
	ConnID   string          `json:"conn_id"`
	Key      string          `json:"key"`
	State    json.RawMessage `json:"state"`
	Identity *Identity       `json:"identity"`
	OnlineAt int64           `json:"online_at"`
}

// presEntry is one presence as a node keeps and gossips it; a nil Meta is
// a leave. Version orders the changes of the node that owns it.
type presEntry struct {
	Channel string `json:"c"`
	Conn    string `json:"k"`
	Meta    *Meta  `json:"m,omitempty"`
	Version uint64 `json:"v"`
}

// presSet is the presences of one node: channel -> connection -> entry.
type presSet map[string]map[string]*presEntry

func (s presSet) get(channel, conn string) *presEntry { return s[channel][conn] }

func (s presSet) put(e *presEntry) {
	m := s[e.Channel]
	if m == nil {
		m = map[string]*presEntry{}
		s[e.Channel] = m
	}
	m[e.Conn] = e
}

func (s presSet) del(channel, conn string) {
	if m := s[channel]; m != nil {
		delete(m, conn)
		if len(m) == 0 {
			delete(s, channel)
		}
	}
}

// Presence holds the presences tracked by this node's connections and
// those gossiped by the other nodes, and tells observers of a channel
// about joins, updates and leaves. It is not in the Raft log: a node's
// presences live in its memory and leave with it.
type Presence struct {
	hub *Hub
	// epoch is this process's incarnation: its start time, read from
	// time.Now rather than clock, since a later incarnation must have a
	// larger epoch and an injected clock (a test's, the fault build's
	// skewed one) does not promise that across restarts.
	epoch int64
	clock func() time.Time

	mu        sync.Mutex
	self      string
	gossip    Gossip
	version   uint64
	sent      uint64
	local     presSet
	pending   []presEntry
	origins   map[string]*origin
	observers map[string]map[*Conn]bool
	perConn   map[*Conn]*connPresence

	kick chan struct{}
	stop chan struct{}
	once sync.Once
}

// connPresence is what one connection tracks and observes.
type connPresence struct {
	tracked  map[string]bool
	observed map[string]bool
}

func newPresence(h *Hub, clock func() time.Time) *Presence {
	return &Presence{
		hub: h, epoch: time.Now().UnixNano(), clock: clock,
		local: presSet{}, origins: map[string]*origin{},
		observers: map[string]map[*Conn]bool{}, perConn: map[*Conn]*connPresence{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}),
	}
}

// Presence is the hub's presence registry.
func (h *Hub) Presence() *Presence { return h.presence }

// CheckChannel reports why channel cannot be a presence channel (nil when
// it can): empty, or longer than 1024 bytes.
func CheckChannel(channel string) *Error {
	if channel == "" {
		return &Error{CodeInvalidMessage, "a presence message needs a channel"}
	}
	if len(channel) > maxChannelLen {
		return &Error{CodeTooLarge, fmt.Sprintf("channel name longer than %d bytes", maxChannelLen)}
	}
	return nil
}

func (p *Presence) connLocked(c *Conn) *connPresence {
	cp := p.perConn[c]
	if cp == nil {
		cp = &connPresence{tracked: map[string]bool{}, observed: map[string]bool{}}
		p.perConn[c] = cp
	}
	return cp
}

// observeLocked makes c an observer of channel, within the connection's
// subscription limit.
func (p *Presence) observeLocked(c *Conn, channel string) *Error {
	cp := p.connLocked(c)
	if cp.observed[channel] {
		return nil
	}
	if max := p.hub.opts.MaxSubscriptions; len(cp.observed) >= max {
		return &Error{CodeTooLarge, fmt.Sprintf("too many presence channels (at most %d per connection)", max)}
	}
	cp.observed[channel] = true
	obs := p.observers[channel]
	if obs == nil {
		obs = map[*Conn]bool{}
		p.observers[channel] = obs
	}
	obs[c] = true
	return nil
}

// Track sets c's presence on channel under key ("" for the identity's id,
// else the connection id) with state, observes the channel, and queues
// the channel's state for c. The other observers get a join (or an
// update; a leave and a join when the key changed).
func (c *Conn) Track(channel, key string, state json.RawMessage) *Error {
	if e := CheckChannel(channel); e != nil {
		return e
	}
	if len(state) > MaxPresenceState {
		return &Error{CodeTooLarge, fmt.Sprintf("presence state larger than %d bytes", MaxPresenceState)}
	}
	if len(state) == 0 {
		state = json.RawMessage("{}")
	}
	if !json.Valid(state) {
		return &Error{CodeInvalidMessage, "presence state must be JSON"}
	}
	if len(key) > maxKeyLen {
		return &Error{CodeTooLarge, fmt.Sprintf("presence key longer than %d bytes", maxKeyLen)}
	}
	p := c.hub.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.closed() {
		return &Error{CodeInvalidMessage, "connection closed"}
	}
	// Read under p.mu: a credential that ends drops the presences that
	// carry its identity under p.mu after clearing it (dropIdentified).
	ident := c.Identity()
	if key == "" {
		key = c.id
		if ident != nil {
			key = ident.ID
		}
	}
	if e := p.observeLocked(c, channel); e != nil {
		return e
	}
	meta := &Meta{ConnID: c.id, Key: key, State: append(json.RawMessage(nil), state...), Identity: ident, OnlineAt: p.clock().Unix()}
	if old := p.local.get(channel, c.id); old != nil {
		if old.Meta.Key == key {
			meta.OnlineAt = old.Meta.OnlineAt
		} else {
			p.changeLocked(c, channel, nil)
		}
	}
	p.changeLocked(c, channel, meta)
	p.connLocked(c).tracked[channel] = true
	p.queueStateLocked(c, channel)
	return nil
}

// Untrack removes c's presence from channel (the others get a leave) and
// queues the channel's state for c, which still observes it.
func (c *Conn) Untrack(channel string) *Error {
	if e := CheckChannel(channel); e != nil {
		return e
	}
	p := c.hub.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.local.get(channel, c.id) != nil {
		p.changeLocked(c, channel, nil)
	}
	if cp := p.perConn[c]; cp != nil {
		delete(cp.tracked, channel)
	}
	p.queueStateLocked(c, channel)
	return nil
}

// ObservePresence queues channel's state for c and the channel's later
// events, without c appearing in it.
func (c *Conn) ObservePresence(channel string) *Error {
	if e := CheckChannel(channel); e != nil {
		return e
	}
	p := c.hub.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.closed() {
		return &Error{CodeInvalidMessage, "connection closed"}
	}
	if e := p.observeLocked(c, channel); e != nil {
		return e
	}
	p.queueStateLocked(c, channel)
	return nil
}

// dropConn removes a closed connection's presences and observations.
func (p *Presence) dropConn(c *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cp := p.perConn[c]
	if cp == nil {
		return
	}
	for ch := range cp.tracked {
		if p.local.get(ch, c.id) != nil {
			p.changeLocked(c, ch, nil)
		}
	}
	for ch := range cp.observed {
		if obs := p.observers[ch]; obs != nil {
			delete(obs, c)
			if len(obs) == 0 {
				delete(p.observers, ch)
			}
		}
	}
	delete(p.perConn, c)
}

// dropIdentified untracks c's presences that carry an identity: c's
// credential no longer holds, so neither does the identity they show.
// Observers get a leave, c the channel's state; c keeps observing.
func (p *Presence) dropIdentified(c *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cp := p.perConn[c]
	if cp == nil {
		return
	}
	for ch := range cp.tracked {
		if e := p.local.get(ch, c.id); e != nil && e.Meta.Identity != nil {
			p.changeLocked(c, ch, nil)
			delete(cp.tracked, ch)
			p.queueStateLocked(c, ch)
		}
	}
}

// changeLocked records a local change (meta nil: leave), tells the
// channel's observers other than c, and queues it for gossip.
func (p *Presence) changeLocked(c *Conn, channel string, meta *Meta) {
	old := p.local.get(channel, c.id)
	p.version++
	e := &presEntry{Channel: channel, Conn: c.id, Meta: meta, Version: p.version}
	if meta == nil {
		p.local.del(channel, c.id)
		if old != nil {
			p.emitLocked(channel, "leave", old.Meta, c)
		}
	} else {
		p.local.put(e)
		event := "join"
		if old != nil {
			event = "update"
		}
		p.emitLocked(channel, event, meta, c)
	}
	if p.gossip == nil {
		return // not attached to a cluster: nothing to tell
	}
	p.pending = append(p.pending, *e)
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// emitLocked sends a presence event to the observers of channel, except
// skip.
func (p *Presence) emitLocked(channel, event string, meta *Meta, skip *Conn) {
	for c := range p.observers[channel] {
		if c != skip {
			c.pushPresence(Message{Type: "presence", Event: event, Channel: channel, Meta: meta})
		}
	}
}

func (p *Presence) queueStateLocked(c *Conn, channel string) {
	c.pushPresence(Message{Type: "presence-state", Channel: channel, State: p.stateLocked(channel)})
}

// State is channel's presences across the cluster: key -> metas, oldest
// first.
func (p *Presence) State(channel string) map[string][]Meta {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stateLocked(channel)
}

func (p *Presence) stateLocked(channel string) map[string][]Meta {
	out := map[string][]Meta{}
	add := func(s presSet) {
		for _, e := range s[channel] {
			out[e.Meta.Key] = append(out[e.Meta.Key], *e.Meta)
		}
	}
	add(p.local)
	for _, o := range p.origins {
		add(o.entries)
	}
	for _, metas := range out {
		sort.Slice(metas, func(i, j int) bool {
			if metas[i].OnlineAt != metas[j].OnlineAt {
				return metas[i].OnlineAt < metas[j].OnlineAt
			}
			return metas[i].ConnID < metas[j].ConnID
		})
	}
	return out
}

// PresenceStats are the presence figures for the metrics snapshot.
type PresenceStats struct {
	Local, Remote, Channels int64
}

// Stats counts this node's presences, the other nodes', and observed
// channels.
func (p *Presence) Stats() PresenceStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	var st PresenceStats
	for _, m := range p.local {
		st.Local += int64(len(m))
	}
	for _, o := range p.origins {
		for _, m := range o.entries {
			st.Remote += int64(len(m))
		}
	}
	st.Channels = int64(len(p.observers))
	return st
}
