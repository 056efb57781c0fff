package realtime

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"svcd/engine"
	"svcd/engine/filter"
	"svcd/fsm"
)

// fakeAuth knows collections "posts" and "secret" (nobody but admins may
// view secret) and renders a record as its id.
type fakeAuth struct{}

func (fakeAuth) Collection(name string) string {
	for _, c := range []string{"posts", "secret"} {
		if strings.EqualFold(name, c) {
			return c
		}
	}
	return ""
}

func (fakeAuth) View(p engine.Principal, ch *engine.RecordChange) View {
	if ch.CollectionName == "secret" && !p.IsAdmin() {
		return nil
	}
	return fakeView{ch}
}

// fakeAuth's credentials always hold and never expire (credentials_test.go
// has an authorizer whose credentials end).
func (fakeAuth) Recheck(_ context.Context, p engine.Principal) (engine.Principal, error) {
	return p, nil
}

func (fakeAuth) Expiry(engine.Principal) time.Time { return time.Time{} }

func (fakeAuth) Touched(fsm.Event) *engine.CredentialTouch { return nil }

type fakeView struct{ ch *engine.RecordChange }

func (v fakeView) Match(f filter.Expr) bool {
	ok, err := filter.Eval(f, &filter.Collection{Name: v.ch.CollectionName, Fields: []*filter.FieldDef{{Name: "id", Type: "id"}, {Name: "n", Type: "number"}}},
		filter.Record{"id": v.ch.Row[0], "n": v.ch.Row[1]}, nil)
	return err == nil && ok
}

func (v fakeView) Variant() int { return 0 }

func (v fakeView) JSON() []byte { return []byte(`"` + v.ch.Row[0].(string) + `"`) }

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestHub(opts Options) (*Hub, *clock) {
	c := &clock{t: time.Unix(1000, 0)}
	opts.Auth, opts.Clock = fakeAuth{}, c.now
	return NewHub(opts), c
}

func rec(index uint64, kind, coll, id string, n int64) fsm.Event {
	return fsm.Event{Index: index, Kind: kind, Data: &engine.RecordChange{CollectionID: "c_" + coll, CollectionName: coll, Row: []any{id, n}}}
}

// next reads what conn has to send within a short time (nil when nothing).
func next(t *testing.T, c *Conn) ([]Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	m, err := c.Next(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, nil
	}
	return m, err
}

func ids(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Type == "error" {
			out = append(out, m.Code)
			continue
		}
		out = append(out, m.EventID+":"+m.Type+":"+m.Collection)
	}
	return out
}

func TestTopics(t *testing.T) {
	h, _ := newTestHub(Options{})
	c := h.Connect(engine.Principal{})
	got, err := c.Subscribe([]string{" Posts ", "POSTS/abc", "posts.Create", "*", "*.DELETE", "posts"}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"posts", "posts/abc", "posts.create", "*", "*.delete"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("canonical %v, want %v", got, want)
	}
	for _, bad := range []string{"nope", "posts.upsert", "posts/", "*.x", "", "a b", "posts/a/b"} {
		if _, err := c.Subscribe([]string{"posts", bad}, ""); err == nil || err.Code != CodeInvalidTopics {
			t.Errorf("%q: got %v, want invalid_topics", bad, err)
		}
	}
	if !reflect.DeepEqual(c.Topics(), want) {
		t.Fatalf("a failed subscribe changed the subscriptions: %v", c.Topics())
	}
	if _, err := c.Subscribe([]string{"posts"}, "n >"); err == nil || err.Code != CodeInvalidFilter {
		t.Fatalf("bad filter: %v", err)
	}
	if _, err := c.Subscribe([]string{"posts"}, "n = '"+strings.Repeat("x", MaxFilterLen)+"'"); err == nil || err.Code != CodeTooLarge {
		t.Fatalf("long filter: %v", err)
	}
	if got, _ := c.Unsubscribe([]string{"POSTS/abc"}); !reflect.DeepEqual(got, []string{"posts/abc"}) {
		t.Fatalf("unsubscribe answered %v", got)
	}
	if st := h.Stats(); st.Subscriptions != 4 || st.Connections != 1 {
		t.Fatalf("stats %+v", st)
	}
	c.Close()
	if st := h.Stats(); st.Subscriptions != 0 || st.Connections != 0 {
		t.Fatalf("stats after close %+v", st)
	}
}

func TestDeliveryTopicsFiltersRules(t *testing.T) {
	h, _ := newTestHub(Options{MaxSubscriptions: 3})
	anon := h.Connect(engine.Principal{})
	admin := h.Connect(engine.Principal{Kind: engine.AdminPrincipal})
	for _, c := range []*Conn{anon, admin} {
		if _, err := c.Subscribe([]string{"posts.update", "posts/b", "secret"}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Subscribe([]string{"posts.create"}, "n > 5"); err == nil || err.Code != CodeTooLarge {
			t.Fatalf("fourth subscription: %v", err)
		}
		if _, err := c.Subscribe([]string{"posts.update"}, "n > 5"); err != nil {
			t.Fatal(err)
		}
		c.Start()
	}
	h.Observe([]fsm.Event{
		rec(10, engine.EvRecordCreate, "posts", "a", 1), // no topic
		rec(11, engine.EvRecordUpdate, "posts", "a", 1), // filter fails
		rec(12, engine.EvRecordUpdate, "posts", "a", 9), // filter passes
		rec(12, engine.EvRecordDelete, "posts", "b", 1), // posts/b
		{Index: 13, Kind: "schema"},
		rec(14, engine.EvRecordCreate, "secret", "s", 1), // rule
	})
	got, err := next(t, anon)
	if err != nil || !reflect.DeepEqual(ids(got), []string{"12:update:posts", "12.1:delete:posts"}) {
		t.Fatalf("anonymous got %v %v", ids(got), err)
	}
	got, err = next(t, admin)
	if err != nil || !reflect.DeepEqual(ids(got), []string{"12:update:posts", "12.1:delete:posts", "14:create:secret"}) {
		t.Fatalf("admin got %v %v", ids(got), err)
	}
	if got[1].ID != "b" || string(got[0].Record) != `"a"` {
		t.Fatalf("payloads %+v", got)
	}
}

func TestReplay(t *testing.T) {
	h, clk := newTestHub(Options{StartIndex: 5})
	h.Observe([]fsm.Event{rec(6, engine.EvRecordCreate, "posts", "a", 1), rec(7, engine.EvRecordCreate, "posts", "b", 1), rec(7, engine.EvRecordCreate, "posts", "c", 1)})
	resume := func(id string) *Conn {
		c := h.Connect(engine.Principal{})
		if _, err := c.Subscribe([]string{"posts"}, ""); err != nil {
			t.Fatal(err)
		}
		if err := c.Resume(id); err != nil {
			t.Fatal(err)
		}
		c.Start()
		return c
	}
	for _, tc := range []struct {
		from string
		want []string
	}{
		{"5", []string{"6:create:posts", "7:create:posts", "7.1:create:posts"}},
		{"6", []string{"7:create:posts", "7.1:create:posts"}},
		{"7", []string{"7.1:create:posts"}},
		{"7.1", nil},
		{"4", []string{CodeReplayExceeded}},
	} {
		got, err := next(t, resume(tc.from))
		if err != nil || !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("from %s: got %v %v, want %v", tc.from, ids(got), err, tc.want)
		}
	}
	// An id this node has not applied yet: the events up to it are skipped.
	ahead := resume("8")
	h.Observe([]fsm.Event{rec(8, engine.EvRecordCreate, "posts", "d", 1), rec(9, engine.EvRecordCreate, "posts", "e", 1)})
	if got, _ := next(t, ahead); !reflect.DeepEqual(ids(got), []string{"9:create:posts"}) {
		t.Fatalf("ahead got %v", ids(got))
	}
	// Past the retention window the old events are gone.
	clk.t = clk.t.Add(31 * time.Second)
	h.Observe([]fsm.Event{rec(10, engine.EvRecordCreate, "posts", "f", 1)})
	if got, _ := next(t, resume("8")); !reflect.DeepEqual(ids(got), []string{CodeReplayExceeded}) {
		t.Fatalf("evicted: got %v", ids(got))
	}
	if got, _ := next(t, resume("9")); !reflect.DeepEqual(ids(got), []string{"10:create:posts"}) {
		t.Fatalf("at the floor: got %v", ids(got))
	}
	// A quiet node trims the ring when a client resumes.
	clk.t = clk.t.Add(31 * time.Second)
	if got, _ := next(t, resume("9")); !reflect.DeepEqual(ids(got), []string{CodeReplayExceeded}) {
		t.Fatalf("quiet node, evicted: got %v", ids(got))
	}
	if got, _ := next(t, resume("10")); got != nil {
		t.Fatalf("quiet node, at the floor: got %v", ids(got))
	}
	if err := h.Connect(engine.Principal{}).Resume("x"); err == nil || err.Code != CodeInvalidMessage {
		t.Fatalf("malformed id: %v", err)
	}
}

func TestSlowConsumerDropped(t *testing.T) {
	h, _ := newTestHub(Options{MaxPending: 2})
	slow := h.Connect(engine.Principal{})
	slow.Start()
	var batch []fsm.Event
	for i := range 3 {
		batch = append(batch, rec(uint64(20+i), engine.EvRecordCreate, "posts", "x", 1))
	}
	h.Observe(batch) // must not block
	select {
	case <-slow.Done():
	default:
		t.Fatal("slow consumer not dropped")
	}
	if _, err := slow.Next(context.Background()); !errors.Is(err, ErrSlowConsumer) {
		t.Fatalf("Next: %v", err)
	}
	if st := h.Stats(); st.Dropped != 1 || st.Connections != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestIDs(t *testing.T) {
	for _, tc := range []struct {
		s   string
		i   uint64
		seq uint32
		ok  bool
	}{{"12", 12, 0, true}, {"12.3", 12, 3, true}, {"x", 0, 0, false}, {"1.x", 0, 0, false}, {"-1", 0, 0, false}} {
		i, seq, ok := ParseID(tc.s)
		if i != tc.i || seq != tc.seq || ok != tc.ok {
			t.Errorf("ParseID(%q) = %d %d %v", tc.s, i, seq, ok)
		}
		if ok && formatID(i, seq) != tc.s {
			t.Errorf("formatID(%d, %d) = %s", i, seq, formatID(i, seq))
		}
	}
}
