package realtime

import (
	"context"
	"errors"
	"time"

	"svcd/engine"
)

// Credentials are checked for as long as a connection uses them. The state
// machine's observer never rechecks anything: for each committed event the
// Authorizer says may change credentials (Touched), it flags the open
// connections whose principal it touches, looked up in an index by
// principal id and token id, and wakes them. Each flagged connection
// rechecks its principal on its own goroutine (Next) before it takes any
// further event from the ring. The flag is set under the hub's lock
// together with the events of the same batch, so an event committed after
// the credential event is never delivered with the old rights; events
// before it that were not delivered yet are read as the rechecked
// principal too (stricter, never looser).
//
// A principal set from outside (at connect, or by the auth message) was
// authenticated against some earlier state: the events observed since the
// caller's AuthMark are matched against it, and any that touch it make the
// connection recheck before its first event.

// ErrUnauthorized ends a connection opened with CloseOnRevoke whose
// credential no longer holds.
var ErrUnauthorized = errors.New("realtime: the connection's credentials no longer hold")

// AuthMark is a point in the hub's sequence of credential events. Read it
// (Hub.AuthMark) before authenticating a principal that will be handed to
// ConnectWith or SetPrincipal.
type AuthMark struct{ seq uint64 }

// touchLogSize bounds the recent credential events kept to check newly
// authenticated principals against; a mark older than the log makes the
// connection recheck.
const touchLogSize = 256

// expiryRetry is how long a connection whose credential outlived its
// Expiry (clocks that disagree) waits before the next recheck.
const expiryRetry = time.Second

type touchRec struct {
	seq uint64
	t   *engine.CredentialTouch
}

type connSet map[*Conn]struct{}

// AuthMark is the current mark.
func (h *Hub) AuthMark() AuthMark {
	h.mu.Lock()
	defer h.mu.Unlock()
	return AuthMark{h.touchSeq + 1}
}

// touchLocked flags the connections an event touches and logs it.
func (h *Hub) touchLocked(t *engine.CredentialTouch) {
	h.touchSeq++
	if len(h.touchLog) == touchLogSize {
		copy(h.touchLog, h.touchLog[1:])
		h.touchLog = h.touchLog[:touchLogSize-1]
	}
	h.touchLog = append(h.touchLog, touchRec{h.touchSeq, t})
	visit := func(set connSet) {
		for c := range set {
			if !c.recheck && t.Match(c.held) {
				h.flagLocked(c)
			}
		}
	}
	switch {
	case t.TokenID != "":
		visit(h.byToken[t.TokenID])
	case t.ID != "":
		visit(h.byID[t.ID])
	default:
		visit(h.authed)
	}
}

// flagLocked asks c to recheck before its next event, and wakes it.
func (h *Hub) flagLocked(c *Conn) {
	c.recheck = true
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// installLocked makes p, authenticated after mark, c's indexed principal
// and arms its expiry; p is rechecked first when an event observed since
// mark may have changed it.
func (h *Hub) installLocked(c *Conn, p engine.Principal, exp time.Time, mark AuthMark) {
	if c.err != nil {
		return
	}
	h.indexLocked(c, p)
	h.armLocked(c, exp, false)
	if p.Kind != engine.Anonymous && h.touchedSinceLocked(p, mark) {
		h.flagLocked(c)
	}
}

// touchedSinceLocked reports whether an event observed at or after mark
// may have changed p (true when the log no longer reaches back to it).
func (h *Hub) touchedSinceLocked(p engine.Principal, mark AuthMark) bool {
	if mark.seq == 0 {
		return true
	}
	if mark.seq > h.touchSeq {
		return false
	}
	if len(h.touchLog) == 0 || h.touchLog[0].seq > mark.seq {
		return true
	}
	for _, r := range h.touchLog[mark.seq-h.touchLog[0].seq:] {
		if r.t.Match(p) {
			return true
		}
	}
	return false
}

func (h *Hub) indexLocked(c *Conn, p engine.Principal) {
	h.unindexLocked(c)
	c.held = p
	if p.Kind == engine.Anonymous {
		return
	}
	h.authed[c] = struct{}{}
	addConn(h.byID, p.ID, c)
	addConn(h.byToken, p.TokenID, c)
}

func (h *Hub) unindexLocked(c *Conn) {
	if c.held.Kind == engine.Anonymous {
		return
	}
	delete(h.authed, c)
	dropConn(h.byID, c.held.ID, c)
	dropConn(h.byToken, c.held.TokenID, c)
	c.held = engine.Principal{}
}

func addConn(m map[string]connSet, key string, c *Conn) {
	if key == "" {
		return
	}
	s := m[key]
	if s == nil {
		s = connSet{}
		m[key] = s
	}
	s[c] = struct{}{}
}

func dropConn(m map[string]connSet, key string, c *Conn) {
	if s := m[key]; s != nil {
		delete(s, c)
		if len(s) == 0 {
			delete(m, key)
		}
	}
}

// armLocked sets c's expiry timer for exp (zero: none), an instant on the
// hub's clock (the engine's: the token times come from it). A timer is a
// runtime timer, not a goroutine: ten thousand idle connections cost ten
// thousand heap entries. rechecked: the credential was just found to hold,
// so an exp already past means the clocks disagree: retry a little later.
func (h *Hub) armLocked(c *Conn, exp time.Time, rechecked bool) {
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
	c.expGen++
	if exp.IsZero() || c.err != nil {
		return
	}
	d := exp.Sub(h.opts.Clock())
	if rechecked && d <= 0 {
		d = expiryRetry
	}
	gen := c.expGen
	c.expiry = time.AfterFunc(max(d, 0), func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if c.expGen == gen && c.err == nil {
			h.flagLocked(c)
		}
	})
}

// recheckNow rechecks c's credential (Next, on c's goroutine, with no
// lock held). When it holds, c reads events as the principal the engine
// returns (current role, scopes, record). When it does not:
//
//   - CloseOnRevoke: c fails with ErrUnauthorized, which is returned;
//   - otherwise c carries on as anonymous (its subscriptions kept and
//     filtered by the view rules as anonymous): its presences that carry
//     an identity are untracked (observers get a leave, c the channel's
//     state), and an unauthorized error message is returned to send.
//
// A recheck whose principal was replaced meanwhile (SetPrincipal) is
// dropped: the new principal has its own.
func (c *Conn) recheckNow(ctx context.Context) ([]Message, error) {
	h := c.hub
	c.mu.Lock()
	cred, gen := c.cred, c.gen
	c.mu.Unlock()
	if cred.Kind == engine.Anonymous {
		return nil, nil
	}
	np, err := h.opts.Auth.Recheck(ctx, cred)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var exp time.Time
	if err == nil {
		exp = h.opts.Auth.Expiry(np)
	}
	c.mu.Lock()
	if c.gen != gen {
		c.mu.Unlock()
		return nil, nil
	}
	if err == nil {
		c.cred, c.principal = np, c.readAs(np)
		h.mu.Lock()
		if c.err == nil {
			h.indexLocked(c, np)
			h.armLocked(c, exp, true)
		}
		h.mu.Unlock()
		c.mu.Unlock()
		return nil, nil
	}
	if c.opts.CloseOnRevoke {
		c.mu.Unlock()
		h.mu.Lock()
		h.failLocked(c, ErrUnauthorized)
		h.mu.Unlock()
		h.presence.dropConn(c)
		return nil, ErrUnauthorized
	}
	anon := engine.Principal{Request: cred.Request}
	c.cred, c.principal, c.identity = anon, c.readAs(anon), nil
	c.gen++
	h.mu.Lock()
	if c.err == nil {
		h.indexLocked(c, anon)
		h.armLocked(c, time.Time{}, false)
	}
	h.mu.Unlock()
	c.mu.Unlock()
	h.presence.dropIdentified(c)
	return []Message{{Type: "error", Code: CodeUnauthorized,
		Text: "the connection's credentials no longer hold (signed out, revoked, expired or changed); it continues as anonymous: send auth with a valid token"}}, nil
}
