package realtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"svcd/engine"
	"svcd/engine/filter"
	"svcd/fsm"
)

// Authorizer is what the hub needs of the engine: collection names, the
// view rule, and credentials checked for as long as a connection uses
// them. It must be safe for concurrent use.
type Authorizer interface {
	// Collection resolves a collection name (any case) or id to the
	// name the schema spells; "" when there is none.
	Collection(name string) string
	// View returns the change as p may see it, or nil when the
	// collection's view rule denies p (admins bypass rules).
	View(p engine.Principal, ch *engine.RecordChange) View
	// Recheck decides again whether p's credential holds against the
	// state applied now and returns p as it stands (role, scopes, the
	// record @request.auth reads); an error when it no longer holds.
	Recheck(ctx context.Context, p engine.Principal) (engine.Principal, error)
	// Expiry is when p's credential expires (zero: it does not).
	Expiry(p engine.Principal) time.Time
	// Touched names the principals whose credential or rights a committed
	// event may have changed; nil when none. It runs on the state
	// machine's observer: it must be quick and read no database.
	Touched(ev fsm.Event) *engine.CredentialTouch
}

// View is one record change as one principal may see it.
type View interface {
	// Match evaluates a subscription filter against the record.
	Match(f filter.Expr) bool
	// JSON is the record as the principal may read it.
	JSON() []byte
	// Variant names the rendering: views of one change with the same
	// variant have the same JSON, so its frame is encoded once for all.
	Variant() int
}

// Error is a protocol error sent to the client as an error message.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Error codes beyond CONTRACT.md's list: replay_window_exceeded and
// slow_consumer.
const (
	CodeInvalidTopics  = "invalid_topics"
	CodeInvalidMessage = "invalid_message"
	CodeInvalidFilter  = "invalid_filter"
	CodeUnauthorized   = "unauthorized"
	CodeTooLarge       = "too_large"
	CodeReplayExceeded = "replay_window_exceeded"
	CodeSlowConsumer   = "slow_consumer"
)

// ResyncRestore is the reason of the resync message every connection gets
// when a backup is restored (its eventId is the restore's log index): the
// data went back in time without events.
const ResyncRestore = "restore"

// MaxFilterLen is the filter language's length limit.
const MaxFilterLen = 4096

// Message is one server-to-client message.
type Message struct {
	Type       string
	EventID    string
	Collection string
	Record     json.RawMessage
	ID         string
	Topics     []string
	Code       string
	Text       string
	// A flags message: which flag or segment changed, and how.
	Flag *engine.FlagChange
	// Presence messages.
	Channel string
	Event   string
	Meta    *Meta
	State   map[string][]Meta
	// Label names the labelled subscription a record event was delivered
	// for (labelled.go); "" for the others.
	Label string

	// raw is the message already encoded (a record event's frame, shared
	// by the subscribers that see the same rendering).
	raw []byte
}

// Encode is the message's JSON: its shared encoding when it has one.
func (m Message) Encode() ([]byte, error) {
	if m.raw != nil {
		return m.raw, nil
	}
	return m.MarshalJSON()
}

// MarshalJSON writes the fields the message's type carries.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.raw != nil {
		return m.raw, nil
	}
	out := map[string]any{"type": m.Type}
	if m.EventID != "" {
		out["eventId"] = m.EventID
	}
	switch m.Type {
	case "create", "update":
		out["collection"], out["record"] = m.Collection, m.Record
	case "delete":
		out["collection"], out["id"] = m.Collection, m.ID
	case "subscribed", "unsubscribed", "subs":
		t := m.Topics
		if t == nil {
			t = []string{}
		}
		out["topics"] = t
	case "error":
		out["code"], out["message"] = m.Code, m.Text
	case "resync":
		out["reason"], out["message"] = m.Code, m.Text
	case "flags":
		if m.Flag != nil {
			out["kind"], out["op"], out["key"] = m.Flag.Kind, m.Flag.Op, m.Flag.Key
		}
	case "presence-state":
		st := m.State
		if st == nil {
			st = map[string][]Meta{}
		}
		out["channel"], out["state"] = m.Channel, st
	case "presence":
		out["event"], out["channel"], out["meta"] = m.Event, m.Channel, m.Meta
	}
	return json.Marshal(out)
}

// ErrorMessage is the error message for err.
func ErrorMessage(err *Error) Message {
	return Message{Type: "error", Code: err.Code, Text: err.Message}
}

type sub struct {
	t   topic
	key string
	// label is set for a labelled subscription (labelled.go): it is
	// delivered on its own, under its label, deletes with their record.
	label string
	fText string
	f     filter.Expr
}

// Conn is one client: its principal, subscriptions and cursor in the ring.
type Conn struct {
	hub  *Hub
	id   string
	done chan struct{}
	opts ConnOptions

	mu sync.Mutex
	// cred is the credential's principal, what rechecks decide on;
	// principal is what events are read as (opts.ReadAs of cred).
	cred      engine.Principal
	principal engine.Principal
	gen       uint64 // bumped when the principal is replaced, save by its own recheck
	identity  *Identity
	subs      []sub // copy-on-write

	// kick wakes Next for presence messages.
	kick chan struct{}

	// Owned by the goroutine that calls Next (deliver.go): the hub's
	// wake channel when the cursor last reached the ring's head, and the
	// buffer events are copied into.
	idle  chan struct{}
	batch []*Event

	// Guarded by hub.mu.
	pos      uint64
	started  bool
	startCh  chan struct{}
	notices  []Message
	presQ    []Message // presence messages, sent whether started or not
	skipI    uint64
	skipS    uint32
	skipping bool
	nsubs    int
	err      error
	// held is cred as the hub's index knows it; recheck asks Next to
	// recheck it before it takes further events; expGen names the live
	// expiry timer.
	held    engine.Principal
	recheck bool
	expiry  *time.Timer
	expGen  uint64
}

// ConnOptions are a transport's choices for one connection.
type ConnOptions struct {
	// ReadAs maps the connection's principal to the principal its events
	// are read as (nil: the principal itself). It is applied again to
	// every principal a recheck returns.
	ReadAs func(engine.Principal) engine.Principal
	// CloseOnRevoke ends the connection (Next returns ErrUnauthorized)
	// when its credential no longer holds; otherwise the connection
	// carries on as anonymous after an unauthorized error message.
	CloseOnRevoke bool
	// Mark is the hub's AuthMark read before the principal was
	// authenticated (zero: unknown, the principal is rechecked before
	// the first event).
	Mark AuthMark
	// IDPrefix starts the client id (a node's mark, so that another
	// member can tell whose connection an id names).
	IDPrefix string
}

// Connect registers a connection of principal p with default options.
func (h *Hub) Connect(p engine.Principal) *Conn { return h.ConnectWith(p, ConnOptions{}) }

// ConnectWith registers a connection of principal p. Its cursor is the
// ring's head: it sees the events committed from now on, once started.
// Call Resume (optional) then Start; Close when the client goes.
func (h *Hub) ConnectWith(p engine.Principal, opts ConnOptions) *Conn {
	var b [16]byte
	_, _ = rand.Read(b[:])
	c := &Conn{hub: h, id: opts.IDPrefix + hex.EncodeToString(b[:]), done: make(chan struct{}), opts: opts, identity: IdentityOf(p),
		startCh: make(chan struct{}), kick: make(chan struct{}, 1)}
	c.cred, c.principal = p, c.readAs(p)
	exp := h.opts.Auth.Expiry(p)
	h.mu.Lock()
	c.pos = h.head
	h.conns[c.id] = c
	h.installLocked(c, p, exp, opts.Mark)
	h.mu.Unlock()
	return c
}

// ID is the connection's client id.
func (c *Conn) ID() string { return c.id }

// Done is closed when the connection fails or is closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (nil while open).
func (c *Conn) Err() error {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	return c.err
}

// Close unregisters the connection; its presences leave.
func (c *Conn) Close() {
	c.hub.mu.Lock()
	c.hub.failLocked(c, errClosed)
	c.hub.mu.Unlock()
	c.hub.presence.dropConn(c)
}

// closed reports whether the connection ended.
func (c *Conn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Identity is who the connection's presences belong to: the identity of
// the opening request, or of the last auth message; nil once its
// credential ended.
func (c *Conn) Identity() *Identity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.identity
}

// pushPresence queues a presence message; a connection with more than
// MaxPending of them waiting is dropped as a slow consumer.
func (c *Conn) pushPresence(m Message) {
	h := c.hub
	h.mu.Lock()
	if c.err == nil {
		if len(c.presQ) >= h.opts.MaxPending {
			h.failLocked(c, ErrSlowConsumer)
		} else {
			c.presQ = append(c.presQ, m)
		}
	}
	h.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Principal is the principal the connection's events are read as.
func (c *Conn) Principal() engine.Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.principal
}

// Credential is the connection's principal as authenticated (before
// ConnOptions.ReadAs): anonymous once its credential ended.
func (c *Conn) Credential() engine.Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cred
}

// SetPrincipal switches the principal (the auth message): later events are
// checked against the new principal's rights, later presences carry its
// identity, and later rechecks decide on its credential. mark is the
// hub's AuthMark read before p was authenticated.
func (c *Conn) SetPrincipal(p engine.Principal, mark AuthMark) {
	exp := c.hub.opts.Auth.Expiry(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cred, c.principal, c.identity = p, c.readAs(p), IdentityOf(p)
	c.gen++
	h := c.hub
	h.mu.Lock()
	h.installLocked(c, p, exp, mark)
	h.mu.Unlock()
}

func (c *Conn) readAs(p engine.Principal) engine.Principal {
	if c.opts.ReadAs == nil {
		return p
	}
	return c.opts.ReadAs(p)
}

// Started reports whether delivery has started.
func (c *Conn) Started() bool {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	return c.started
}

// Resume moves a connection that has not started yet to just after the
// event lastID: delivery then replays the retained events after it, in
// order. An id older than the ring queues a replay_window_exceeded error
// and leaves the cursor at the head (the client must resync).
func (c *Conn) Resume(lastID string) *Error {
	idx, seq, ok := ParseID(lastID)
	if !ok {
		return &Error{CodeInvalidMessage, "malformed event id " + fmt.Sprintf("%q", lastID)}
	}
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.started {
		return &Error{CodeInvalidMessage, "lastEventId is only accepted before the first subscription"}
	}
	// The ring is trimmed as events arrive; trim it now too, so a quiet
	// node does not replay beyond the window it promises.
	h.evictLocked(h.opts.Clock())
	if idx < h.floorI || (!h.floorX && idx == h.floorI && seq < h.floorS) {
		c.notices = append(c.notices, Message{Type: "error", Code: CodeReplayExceeded,
			Text: "replay window exceeded: events after " + lastID + " are no longer retained; resync and subscribe again"})
		c.pos = h.head
		return nil
	}
	// The last retained event at or before the id.
	lo, hi := 0, len(h.ring)
	for lo < hi {
		m := (lo + hi) / 2
		e := h.ring[m]
		if idLess(idx, seq, e.Index, e.Seq) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	c.pos = h.first + uint64(lo) - 1
	// Events up to the id this node has not applied yet were seen
	// elsewhere: skip them when they arrive.
	c.skipI, c.skipS, c.skipping = idx, seq, true
	return nil
}

// Start begins delivery (idempotent).
func (c *Conn) Start() {
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.started {
		return
	}
	if c.pos+1 < h.first {
		c.notices = append(c.notices, Message{Type: "error", Code: CodeReplayExceeded,
			Text: "replay window exceeded while the connection waited for its first subscription; resync"})
		c.pos = h.head
	}
	c.started = true
	close(c.startCh)
}

// Subscribe adds topics (each with filterText, replacing a filter an
// existing subscription had) and returns them canonicalized. Nothing is
// subscribed when any topic is invalid.
func (c *Conn) Subscribe(topics []string, filterText string) ([]string, *Error) {
	return c.subscribe(topics, filterText, false)
}

// Replace sets the subscriptions to exactly topics (SSE's subscribe POST).
func (c *Conn) Replace(topics []string, filterText string) ([]string, *Error) {
	return c.subscribe(topics, filterText, true)
}

func (c *Conn) subscribe(topics []string, filterText string, replace bool) ([]string, *Error) {
	if len(topics) == 0 && !replace {
		return nil, &Error{CodeInvalidTopics, "no topics given"}
	}
	var f filter.Expr
	if strings.TrimSpace(filterText) != "" {
		if len(filterText) > MaxFilterLen {
			return nil, &Error{CodeTooLarge, fmt.Sprintf("filter longer than %d characters", MaxFilterLen)}
		}
		var err error
		if f, err = filter.Parse(filterText); err != nil {
			return nil, &Error{CodeInvalidFilter, err.Error()}
		}
	}
	parsed, err := c.parseTopics(topics)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var next []sub
	if !replace {
		next = append(next, c.subs...)
	}
	var canon []string
	for _, t := range parsed {
		s := sub{t: t, key: t.String(), fText: filterText, f: f}
		canon = append(canon, s.key)
		found := false
		for i := range next {
			if next[i].key == s.key {
				next[i], found = s, true
			}
		}
		if !found {
			next = append(next, s)
		}
	}
	if max := c.hub.opts.MaxSubscriptions; len(next) > max {
		return nil, &Error{CodeTooLarge, fmt.Sprintf("too many subscriptions (at most %d per connection)", max)}
	}
	c.setSubsLocked(next)
	return canon, nil
}

// Unsubscribe removes topics (all of them when topics is empty).
func (c *Conn) Unsubscribe(topics []string) ([]string, *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(topics) == 0 {
		var all []string
		for _, s := range c.subs {
			all = append(all, s.key)
		}
		c.setSubsLocked(nil)
		return all, nil
	}
	parsed, err := c.parseTopics(topics)
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	var canon []string
	for _, t := range parsed {
		drop[t.String()] = true
		canon = append(canon, t.String())
	}
	var next []sub
	for _, s := range c.subs {
		if !drop[s.key] {
			next = append(next, s)
		}
	}
	c.setSubsLocked(next)
	return canon, nil
}

// Topics lists the subscriptions in the order they were made.
func (c *Conn) Topics() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.subs))
	for _, s := range c.subs {
		out = append(out, s.key)
	}
	return out
}

func (c *Conn) setSubsLocked(next []sub) {
	c.subs = next
	h := c.hub
	h.mu.Lock()
	if c.err == nil {
		h.subs.Add(int64(len(next) - c.nsubs))
		c.nsubs = len(next)
	}
	h.mu.Unlock()
}

func (c *Conn) parseTopics(topics []string) ([]topic, *Error) {
	var bad []string
	var out []topic
	seen := map[string]bool{}
	for _, raw := range topics {
		t, ok := parseTopic(raw, c.hub.opts.Auth.Collection)
		if !ok {
			bad = append(bad, raw)
			continue
		}
		if !seen[t.String()] {
			seen[t.String()] = true
			out = append(out, t)
		}
	}
	if len(bad) > 0 {
		return nil, &Error{CodeInvalidTopics, "invalid topics: " + strings.Join(quoteAll(bad), ", ")}
	}
	return out, nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
