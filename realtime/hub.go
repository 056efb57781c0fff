package realtime

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// Event is one record change as the hub keeps it.
type Event struct {
	Index uint64 // Raft index of the command
	Seq   uint32 // position among the command's record events
	// Action is create, update or delete.
	Action       string
	Collection   string // name at commit time
	CollectionID string
	RecordID     string
	Change       *engine.RecordChange
	// Flag is set, and Action is "flags", for a flag or segment change.
	Flag *engine.FlagChange

	id  string    // ID, formatted once for every subscriber
	pos uint64    // node-local position in the ring (1, 2, ...)
	at  time.Time // when this node saw it

	// frames caches the encoded message per rendering variant: one
	// encoding per event, not per subscriber.
	frameMu sync.Mutex
	frames  map[int]encodedFrame
}

type encodedFrame struct{ record, raw []byte }

// frame is m (a create or update of this event) with its record as view
// renders it, encoded once per variant and shared.
func (e *Event) frame(view View, m Message) Message {
	v := view.Variant()
	e.frameMu.Lock()
	defer e.frameMu.Unlock()
	if f, ok := e.frames[v]; ok {
		m.Record, m.raw = f.record, f.raw
		return m
	}
	m.Record = view.JSON()
	b, err := m.MarshalJSON()
	if err != nil {
		return m
	}
	if e.frames == nil {
		e.frames = map[int]encodedFrame{}
	}
	e.frames[v] = encodedFrame{m.Record, b}
	m.raw = b
	return m
}

// ID is the event id clients see: the Raft index, plus ".n" for the n-th
// further record event of the same command. Every node gives the same ids.
func (e *Event) ID() string {
	if e.id != "" {
		return e.id
	}
	return formatID(e.Index, e.Seq)
}

func formatID(index uint64, seq uint32) string {
	s := strconv.FormatUint(index, 10)
	if seq > 0 {
		s += "." + strconv.FormatUint(uint64(seq), 10)
	}
	return s
}

// ParseID reads an event id ("123" or "123.2").
func ParseID(s string) (index uint64, seq uint32, ok bool) {
	i, n, dotted := strings.Cut(strings.TrimSpace(s), ".")
	index, err := strconv.ParseUint(i, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if dotted {
		v, err := strconv.ParseUint(n, 10, 32)
		if err != nil {
			return 0, 0, false
		}
		seq = uint32(v)
	}
	return index, seq, true
}

func idLess(ai uint64, as uint32, bi uint64, bs uint32) bool {
	return ai < bi || (ai == bi && as < bs)
}

// ErrSlowConsumer fails a Conn that fell too far behind the log.
var ErrSlowConsumer = errors.New("realtime: consumer too slow, events were dropped")

// errClosed is the reason of a Conn closed by its client or the server.
var errClosed = errors.New("realtime: connection closed")

// Options configure a Hub.
type Options struct {
	Auth Authorizer
	// Retention is the replay window (realtime.retention_sec); nil or a
	// non-positive answer means 30 s.
	Retention func() time.Duration
	// MaxPending is how many undelivered events a Conn may lag behind
	// before it is dropped (default 1024).
	MaxPending int
	// MaxEvents caps the ring whatever the retention (default 100000).
	MaxEvents int
	// MaxSubscriptions per connection (default 100).
	MaxSubscriptions int
	// StartIndex is the applied index when the hub started: an id below it
	// may name events this node never saw (replay window exceeded).
	StartIndex uint64
	// Clock is the node's wall clock (nil: time.Now): the ring's event
	// times and retention, presence times, and the credential expiries the
	// streams are armed for.
	Clock func() time.Time
}

// Stats are the hub's figures for the metrics snapshot.
type Stats struct {
	Connections   int64
	Subscriptions int64
	Dropped       int64 // connections dropped as slow consumers, ever
	RingEvents    int64
}

// Hub holds the replay ring and the connections of one node.
type Hub struct {
	opts Options

	mu     sync.Mutex
	ring   []*Event // ring[0].pos == first
	first  uint64   // pos of ring[0] (head+1 when empty)
	head   uint64   // pos of the newest event
	floorI uint64   // id of the newest event evicted, or StartIndex
	floorS uint32
	floorX bool // floor is StartIndex: every seq of it counts as seen
	wake   chan struct{}
	conns  map[string]*Conn

	// Credential events (credentials.go): their count, the recent ones,
	// and the signed-in connections by principal id and token id.
	touchSeq uint64
	touchLog []touchRec
	authed   connSet
	byID     map[string]connSet
	byToken  map[string]connSet

	presence *Presence

	subs    atomic.Int64
	dropped atomic.Int64
}

// NewHub builds a hub; register Observe on the store before it applies.
func NewHub(opts Options) *Hub {
	if opts.MaxPending <= 0 {
		opts.MaxPending = 1024
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 100000
	}
	if opts.MaxSubscriptions <= 0 {
		opts.MaxSubscriptions = 100
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	h := &Hub{
		opts: opts, first: 1, floorI: opts.StartIndex, floorX: true,
		wake: make(chan struct{}), conns: map[string]*Conn{},
		authed: connSet{}, byID: map[string]connSet{}, byToken: map[string]connSet{},
	}
	h.presence = newPresence(h, opts.Clock)
	return h
}

func (h *Hub) retention() time.Duration {
	if h.opts.Retention != nil {
		if d := h.opts.Retention(); d > 0 {
			return d
		}
	}
	return 30 * time.Second
}

// Observe is the fsm.Observer: it appends the batch's record events to the
// ring, flags the connections whose credentials the batch may have
// changed, evicts what fell out of the window, fails connections that lag
// too far and wakes the readers. It never blocks on a client and never
// reads the database.
func (h *Hub) Observe(events []fsm.Event) {
	var add []*Event
	var slab []Event
	var touches []*engine.CredentialTouch
	var last uint64
	var seq uint32
	now := h.opts.Clock()
	for _, ev := range events {
		if t := h.opts.Auth.Touched(ev); t != nil {
			touches = append(touches, t)
		}
		if ev.Kind == fsm.KindRestore {
			_, replaced := ev.Data.(*fsm.Replaced)
			h.restored(ev.Index, replaced)
			continue
		}
		if ev.Index != last {
			last, seq = ev.Index, 0
		}
		var action string
		switch ev.Kind {
		case engine.EvFlagChange:
			if fc, ok := ev.Data.(*engine.FlagChange); ok {
				add = append(add, &Event{Index: ev.Index, Seq: seq, Action: "flags", Flag: fc, id: formatID(ev.Index, seq), at: now})
				seq++
			}
			continue
		case engine.EvRecordCreate:
			action = "create"
		case engine.EvRecordUpdate:
			action = "update"
		case engine.EvRecordDelete:
			action = "delete"
		default:
			continue
		}
		ch, ok := ev.Data.(*engine.RecordChange)
		if !ok || len(ch.Row) == 0 {
			continue
		}
		id, _ := ch.Row[0].(string)
		if len(slab) == cap(slab) {
			// One allocation for the record events of this call (a bulk
			// create brings thousands), not one each.
			slab = make([]Event, 0, len(events))
		}
		slab = slab[:len(slab)+1]
		e := &slab[len(slab)-1]
		*e = Event{
			Index: ev.Index, Seq: seq, Action: action, Collection: ch.CollectionName,
			CollectionID: ch.CollectionID, RecordID: id, Change: ch, id: formatID(ev.Index, seq), at: now,
		}
		add = append(add, e)
		seq++
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range add {
		h.head++
		e.pos = h.head
		h.ring = append(h.ring, e)
	}
	// In the same critical section as the events: a connection takes
	// none of them before it has seen its flag.
	for _, t := range touches {
		h.touchLocked(t)
	}
	h.evictLocked(now)
	if len(add) == 0 {
		return
	}
	for _, c := range h.conns {
		if c.started && h.head-c.pos > uint64(h.opts.MaxPending) {
			h.failLocked(c, ErrSlowConsumer)
		}
	}
	close(h.wake)
	h.wake = make(chan struct{})
}

// restored handles the state machine's database being replaced by a
// snapshot at index: the changes it covers never passed through Observe,
// so no event before it can be replayed without a gap. The ring is
// emptied, an id before index is answered replay_window_exceeded, and
// every connection is told so (before its next events) and continues from
// here.
func (h *Hub) restored(index uint64, replaced bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.ring)
	h.ring = h.ring[:0]
	h.first = h.head + 1
	h.floorI, h.floorS, h.floorX = index, 0, true
	at := strconv.FormatUint(index, 10)
	for _, c := range h.conns {
		c.pos = h.head
		if c.skipping && c.skipI >= index {
			continue // resumed past the snapshot: it misses nothing
		}
		if replaced {
			// A backup was restored: the data went back in time, which no
			// event describes. Every client drops what it holds.
			c.notices = append(c.notices, Message{Type: "resync", EventID: at, Code: ResyncRestore,
				Text: "a backup was restored at index " + at + ": the data changed without events; fetch what you hold again"})
			continue
		}
		c.notices = append(c.notices, Message{Type: "error", Code: CodeReplayExceeded,
			Text: "this node installed a snapshot at index " + at + "; events before it cannot be replayed: resync"})
	}
	close(h.wake)
	h.wake = make(chan struct{})
}

func (h *Hub) evictLocked(now time.Time) {
	cut := now.Add(-h.retention())
	n := 0
	for n < len(h.ring) && (len(h.ring)-n > h.opts.MaxEvents || h.ring[n].at.Before(cut)) {
		n++
	}
	if n == 0 {
		return
	}
	e := h.ring[n-1]
	h.floorI, h.floorS, h.floorX = e.Index, e.Seq, false
	clear(h.ring[:n])
	h.ring = h.ring[n:]
	h.first += uint64(n)
}

// Stats reports the hub's figures.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Stats{
		Connections: int64(len(h.conns)), Subscriptions: h.subs.Load(),
		Dropped: h.dropped.Load(), RingEvents: int64(len(h.ring)),
	}
}

// Lookup finds an open connection by its client id.
func (h *Hub) Lookup(clientID string) *Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns[clientID]
}

func (h *Hub) failLocked(c *Conn, err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if err == ErrSlowConsumer {
		h.dropped.Add(1)
	}
	delete(h.conns, c.id)
	h.unindexLocked(c)
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
	h.subs.Add(-int64(c.nsubs))
	c.nsubs = 0
	close(c.done)
}

// SetMaxPending changes how far a connection may lag before it is dropped
// (0: a connection is dropped as soon as an event waits for it; tests use
// it to exercise the drop path).
func (h *Hub) SetMaxPending(n int) {
	h.mu.Lock()
	h.opts.MaxPending = max(n, 0)
	h.mu.Unlock()
}
