package realtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// credAuth is fakeAuth with credentials that end: a "revoked" event
// (Subject: a token id) revokes that token, a "role" event (Subject: an
// admin id, Data: the role) changes an admin's role, and expiry names a
// token's expiry, on the clock now (time.Now when nil). Recheck counts its
// calls and may be held (hold).
type credAuth struct {
	fakeAuth
	now      func() time.Time
	mu       sync.Mutex
	revoked  map[string]bool
	roles    map[string]engine.Role
	expiry   map[string]time.Time
	hold     chan struct{} // when set, Recheck waits for it
	rechecks atomic.Int64
}

func newCredAuth() *credAuth {
	return &credAuth{revoked: map[string]bool{}, roles: map[string]engine.Role{}, expiry: map[string]time.Time{}}
}

func (a *credAuth) Recheck(_ context.Context, p engine.Principal) (engine.Principal, error) {
	a.rechecks.Add(1)
	a.mu.Lock()
	hold := a.hold
	a.mu.Unlock()
	if hold != nil {
		<-hold
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.revoked[p.TokenID] {
		return engine.Principal{}, errors.New("revoked")
	}
	now := time.Now
	if a.now != nil {
		now = a.now
	}
	if exp, ok := a.expiry[p.TokenID]; ok && !now().Before(exp) {
		return engine.Principal{}, errors.New("expired")
	}
	if r, ok := a.roles[p.ID]; ok {
		p.Role = r
	}
	return p, nil
}

func (a *credAuth) Expiry(p engine.Principal) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.expiry[p.TokenID]
}

func (a *credAuth) Touched(ev fsm.Event) *engine.CredentialTouch {
	id := ev.Subject
	switch ev.Kind {
	case "revoked":
		a.mu.Lock()
		a.revoked[id] = true
		a.mu.Unlock()
		return &engine.CredentialTouch{TokenID: id, Match: func(p engine.Principal) bool { return p.TokenID == id }}
	case "role":
		a.mu.Lock()
		a.roles[id] = ev.Data.(engine.Role)
		a.mu.Unlock()
		return &engine.CredentialTouch{ID: id, Match: func(p engine.Principal) bool { return p.IsAdmin() && p.ID == id }}
	}
	return nil
}

func newCredHub(a *credAuth) *Hub {
	return NewHub(Options{Auth: a, MaxPending: 1 << 20})
}

func admin(id, tok string) engine.Principal {
	return engine.Principal{Kind: engine.AdminPrincipal, ID: id, TokenID: tok, Role: engine.RoleOwner}
}

// subscribed connects p, subscribes it to everything and starts it.
func subscribed(t *testing.T, h *Hub, p engine.Principal, opts ConnOptions) *Conn {
	t.Helper()
	c := h.ConnectWith(p, opts)
	if _, err := c.Subscribe([]string{"*"}, ""); err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

// The ordering guarantee: an event committed after a credential event is
// never delivered with the old rights, however the delivery goroutine and
// the observer interleave. Events of the revoking command itself count as
// after it. Another connection (another token) goes on unaffected.
func TestCredentialRecheckOrdering(t *testing.T) {
	for round := range 200 {
		a := newCredAuth()
		h := newCredHub(a)
		revoked := subscribed(t, h, admin("a1", "t1"), ConnOptions{})
		other := subscribed(t, h, admin("a2", "t2"), ConnOptions{})
		at := uint64(5 + rand.IntN(40)) // the revocation's index
		var wg sync.WaitGroup
		got := make([][]Message, 2)
		for i, c := range []*Conn{revoked, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				for {
					msgs, err := c.Next(ctx)
					if err != nil {
						t.Errorf("round %d: Next: %v", round, err)
						return
					}
					got[i] = append(got[i], msgs...)
					if n := len(got[i]); n > 0 && got[i][n-1].EventID == "50.1" {
						return
					}
				}
			}()
		}
		for idx := uint64(1); idx <= 50; idx++ {
			batch := []fsm.Event{rec(idx, engine.EvRecordCreate, "secret", fmt.Sprint("s", idx), 1)}
			if idx == at {
				// The revoking command also writes a record, before and
				// after its credential event.
				batch = []fsm.Event{batch[0], {Index: idx, Kind: "revoked", Subject: "t1"},
					rec(idx, engine.EvRecordCreate, "secret", "same", 1)}
			}
			batch = append(batch, rec(idx, engine.EvRecordCreate, "posts", fmt.Sprint("p", idx), 1))
			h.Observe(batch)
			if rand.IntN(4) == 0 {
				time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
			}
		}
		wg.Wait()
		errs := 0
		for _, m := range got[0] {
			if m.Type == "error" {
				errs++
				if m.Code != CodeUnauthorized {
					t.Fatalf("round %d: error %+v", round, m)
				}
				continue
			}
			idx, _, _ := ParseID(m.EventID)
			if m.Collection == "secret" && idx >= at {
				t.Fatalf("round %d: secret event %s delivered after the revocation at %d: %v", round, m.EventID, at, ids(got[0]))
			}
		}
		if errs != 1 || revoked.Principal().Kind != engine.Anonymous || revoked.Identity() != nil {
			t.Fatalf("round %d: %d unauthorized messages, principal %+v", round, errs, revoked.Principal())
		}
		if n := len(got[1]); n != 101 || ids(got[1])[n-1] != "50.1:create:posts" {
			t.Fatalf("round %d: the other connection got %d events: %v", round, n, ids(got[1]))
		}
	}
}

// A change of rights that leaves the credential valid applies from the
// next event, through ReadAs, without an error; only the connections of
// that principal are rechecked.
func TestCredentialRecheckRights(t *testing.T) {
	a := newCredAuth()
	h := newCredHub(a)
	readAs := func(p engine.Principal) engine.Principal {
		if p.IsAdmin() && p.Role < engine.RoleEditor {
			return engine.Principal{}
		}
		return p
	}
	c := subscribed(t, h, admin("a1", "t1"), ConnOptions{ReadAs: readAs, Mark: h.AuthMark()})
	bystander := subscribed(t, h, admin("a2", "t2"), ConnOptions{ReadAs: readAs, Mark: h.AuthMark()})
	h.Observe([]fsm.Event{rec(1, engine.EvRecordCreate, "secret", "s1", 1)})
	if got, _ := next(t, c); !reflect.DeepEqual(ids(got), []string{"1:create:secret"}) {
		t.Fatalf("before: %v", ids(got))
	}
	h.Observe([]fsm.Event{{Index: 2, Kind: "role", Subject: "a1", Data: engine.RoleViewer},
		rec(3, engine.EvRecordCreate, "secret", "s2", 1), rec(3, engine.EvRecordCreate, "posts", "p", 1)})
	if got, _ := next(t, c); !reflect.DeepEqual(ids(got), []string{"3.1:create:posts"}) {
		t.Fatalf("as a viewer: %v", ids(got))
	}
	if p := c.Credential(); p.Role != engine.RoleViewer || p.ID != "a1" || c.Identity() == nil {
		t.Fatalf("credential %+v", p)
	}
	h.Observe([]fsm.Event{{Index: 4, Kind: "role", Subject: "a1", Data: engine.RoleEditor}, rec(5, engine.EvRecordCreate, "secret", "s3", 1)})
	if got, _ := next(t, c); !reflect.DeepEqual(ids(got), []string{"5:create:secret"}) {
		t.Fatalf("an editor again: %v", ids(got))
	}
	if got, _ := next(t, bystander); len(got) != 4 {
		t.Fatalf("bystander: %v", ids(got))
	}
	if n := a.rechecks.Load(); n != 2 {
		t.Fatalf("%d rechecks, want 2 (one per role change, none for the bystander)", n)
	}
}

// A principal authenticated before a credential event the hub observed
// (its mark is older) is rechecked before its first event; one
// authenticated after it is not.
func TestCredentialMark(t *testing.T) {
	a := newCredAuth()
	h := newCredHub(a)
	before := h.AuthMark()
	h.Observe([]fsm.Event{{Index: 1, Kind: "revoked", Subject: "t1"}, {Index: 2, Kind: "revoked", Subject: "t9"}})
	after := h.AuthMark()
	late := subscribed(t, h, admin("a1", "t1"), ConnOptions{Mark: before})
	if got, _ := next(t, late); !reflect.DeepEqual(ids(got), []string{CodeUnauthorized}) {
		t.Fatalf("authenticated before the revocation: %v", ids(got))
	}
	fresh := subscribed(t, h, admin("a2", "t2"), ConnOptions{Mark: before})
	ok := subscribed(t, h, admin("a3", "t3"), ConnOptions{Mark: after})
	h.Observe([]fsm.Event{rec(3, engine.EvRecordCreate, "secret", "s", 1)})
	for _, c := range []*Conn{fresh, ok} {
		if got, _ := next(t, c); !reflect.DeepEqual(ids(got), []string{"3:create:secret"}) {
			t.Fatalf("got %v", ids(got))
		}
	}
	if n := a.rechecks.Load(); n != 1 {
		t.Fatalf("%d rechecks, want 1", n)
	}
	// The auth message: a principal set later is held to the same rule.
	anon := subscribed(t, h, engine.Principal{}, ConnOptions{})
	anon.SetPrincipal(admin("a1", "t1"), before)
	if got, _ := next(t, anon); !reflect.DeepEqual(ids(got), []string{CodeUnauthorized}) {
		t.Fatalf("auth message: %v", ids(got))
	}
	// A mark older than the log: rechecked.
	for i := range touchLogSize + 1 {
		h.Observe([]fsm.Event{{Index: uint64(10 + i), Kind: "revoked", Subject: "other"}})
	}
	old := subscribed(t, h, admin("a4", "t4"), ConnOptions{Mark: after})
	if got, _ := next(t, old); len(got) != 0 || a.rechecks.Load() != 3 {
		t.Fatalf("got %v after %d rechecks", ids(got), a.rechecks.Load())
	}
}

// A recheck under way when the principal is replaced (the auth message) is
// dropped: the new principal is what counts, and it is checked itself.
func TestCredentialRecheckRace(t *testing.T) {
	a := newCredAuth()
	h := newCredHub(a)
	c := subscribed(t, h, admin("a1", "t1"), ConnOptions{Mark: h.AuthMark()})
	hold := make(chan struct{})
	a.mu.Lock()
	a.hold = hold
	a.mu.Unlock()
	h.Observe([]fsm.Event{{Index: 1, Kind: "revoked", Subject: "t1"}})
	done := make(chan []Message)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		msgs, err := c.Next(ctx) // held in the Recheck of t1
		if err != nil {
			t.Error(err)
		}
		done <- msgs
	}()
	for a.rechecks.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	c.SetPrincipal(admin("a2", "t2"), AuthMark{}) // no mark: rechecked
	a.mu.Lock()
	a.hold = nil
	a.mu.Unlock()
	close(hold)
	h.Observe([]fsm.Event{rec(2, engine.EvRecordCreate, "secret", "s", 1)})
	if got := <-done; !reflect.DeepEqual(ids(got), []string{"2:create:secret"}) || c.Credential().TokenID != "t2" {
		t.Fatalf("got %v as %+v", ids(got), c.Credential())
	}
	if n := a.rechecks.Load(); n != 2 {
		t.Fatalf("%d rechecks, want 2", n)
	}
}

// A token that expires ends (CloseOnRevoke) or downgrades the connection
// with no event to trigger it.
func TestCredentialExpiry(t *testing.T) {
	a := newCredAuth()
	h := newCredHub(a)
	a.expiry["t1"] = time.Now().Add(50 * time.Millisecond)
	ws := subscribed(t, h, admin("a1", "t1"), ConnOptions{Mark: h.AuthMark()})
	sse := subscribed(t, h, admin("a1", "t1"), ConnOptions{Mark: h.AuthMark(), CloseOnRevoke: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if got, err := ws.Next(ctx); err != nil || !reflect.DeepEqual(ids(got), []string{CodeUnauthorized}) {
		t.Fatalf("downgraded: %v %v", ids(got), err)
	}
	if _, err := sse.Next(ctx); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("closed: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("expiry seen after %v", d)
	}
	select {
	case <-sse.Done():
	default:
		t.Fatal("the connection is not done")
	}
	h.mu.Lock()
	left := len(h.authed) + len(h.byID) + len(h.byToken)
	h.mu.Unlock()
	if h.Lookup(sse.ID()) != nil || left != 0 {
		t.Fatalf("%d entries left in the index", left)
	}
	if ws.Principal().Kind != engine.Anonymous {
		t.Fatalf("principal %+v", ws.Principal())
	}
}

// Expiries are instants on the hub's clock (the engine's, which dated the
// token), not on time.Now: a clock an hour ahead of time.Now still ends
// the connection when its credential expires on that clock.
func TestCredentialExpiryOnHubClock(t *testing.T) {
	clock := func() time.Time { return time.Now().Add(time.Hour) }
	a := newCredAuth()
	a.now = clock
	h := NewHub(Options{Auth: a, MaxPending: 1 << 20, Clock: clock})
	a.expiry["t1"] = clock().Add(50 * time.Millisecond)
	c := subscribed(t, h, admin("a1", "t1"), ConnOptions{Mark: h.AuthMark(), CloseOnRevoke: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := c.Next(ctx); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("closed: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("expiry seen after %v", d)
	}
}

// A credential that ends untracks the presences that carry its identity:
// observers get a leave, the connection the channel's state; presences
// tracked anonymously stay.
func TestCredentialPresence(t *testing.T) {
	a := newCredAuth()
	h := newCredHub(a)
	c := h.ConnectWith(admin("a1", "t1"), ConnOptions{Mark: h.AuthMark()})
	defer c.Close()
	obs := h.Connect(engine.Principal{})
	defer obs.Close()
	if e := obs.ObservePresence("room"); e != nil {
		t.Fatal(e)
	}
	if e := c.Track("room", "", []byte(`{}`)); e != nil {
		t.Fatal(e)
	}
	drainPresence := func(c *Conn) []string {
		t.Helper()
		msgs, err := next(t, c)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			switch m.Type {
			case "presence":
				out = append(out, m.Event+":"+m.Meta.Key)
			case "presence-state":
				out = append(out, fmt.Sprintf("state:%d", len(m.State)))
			default:
				out = append(out, m.Code)
			}
		}
		return out
	}
	drainPresence(obs)
	drainPresence(c)
	h.Observe([]fsm.Event{{Index: 1, Kind: "revoked", Subject: "t1"}})
	if got := drainPresence(c); !reflect.DeepEqual(got, []string{CodeUnauthorized}) {
		t.Fatalf("connection got %v", got)
	}
	if got := drainPresence(c); !reflect.DeepEqual(got, []string{"state:0"}) {
		t.Fatalf("connection got %v", got)
	}
	if got := drainPresence(obs); !reflect.DeepEqual(got, []string{"leave:a1"}) {
		t.Fatalf("observer got %v", got)
	}
	if e := c.Track("room", "", []byte(`{}`)); e != nil {
		t.Fatal(e)
	}
	if st := h.Presence().State("room"); len(st) != 1 || st[c.ID()] == nil || st[c.ID()][0].Identity != nil {
		t.Fatalf("tracked again: %+v", st)
	}
}
