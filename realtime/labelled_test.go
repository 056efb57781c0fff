package realtime

import (
	"reflect"
	"testing"

	"svcd/engine"
	"svcd/fsm"
)

// labels is "label:action:record" of each message.
func labels(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Label+":"+m.Type+":"+string(m.Record))
	}
	return out
}

func TestReplaceLabelled(t *testing.T) {
	h, _ := newTestHub(Options{MaxSubscriptions: 3})
	c := h.Connect(engine.Principal{})
	c.Start()
	if err := c.ReplaceLabelled([]LabelledSub{
		{Label: "all", Topic: "posts"},
		{Label: "big", Topic: "Posts", Filter: "n > 5"},
		{Label: "b", Topic: "posts/b"},
		{Label: "all", Topic: "secret"}, // a label again: the first stands
	}); err != nil {
		t.Fatal(err)
	}
	h.Observe([]fsm.Event{
		rec(5, engine.EvRecordCreate, "posts", "a", 1),
		rec(6, engine.EvRecordUpdate, "posts", "b", 9),
		rec(7, engine.EvRecordDelete, "posts", "a", 1),
		rec(8, engine.EvRecordCreate, "secret", "s", 9), // the view rule denies a guest
	})
	got, err := next(t, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`all:create:"a"`, `all:update:"b"`, `big:update:"b"`, `b:update:"b"`, `all:delete:"a"`}
	if !reflect.DeepEqual(labels(got), want) {
		t.Fatalf("delivered %v, want %v (a delete carries its record)", labels(got), want)
	}

	for _, tc := range []struct {
		subs []LabelledSub
		code string
	}{
		{[]LabelledSub{{Label: "x", Topic: "nope"}}, CodeInvalidTopics},
		{[]LabelledSub{{Label: "x", Topic: FlagsTopic}}, CodeInvalidTopics},
		{[]LabelledSub{{Label: "x", Topic: "posts", Filter: "n >"}}, CodeInvalidFilter},
		{[]LabelledSub{{Label: "1", Topic: "posts"}, {Label: "2", Topic: "posts"}, {Label: "3", Topic: "posts"}, {Label: "4", Topic: "posts"}}, CodeTooLarge},
	} {
		if err := c.ReplaceLabelled(tc.subs); err == nil || err.Code != tc.code {
			t.Errorf("%v: %v, want %s", tc.subs, err, tc.code)
		}
	}
	if st := h.Stats(); st.Subscriptions != 3 {
		t.Fatalf("a refused set changed the subscriptions: %+v", st)
	}
	if err := c.ReplaceLabelled(nil); err != nil || h.Stats().Subscriptions != 0 {
		t.Fatalf("empty set: %v %+v", err, h.Stats())
	}
}

func TestNodePrefix(t *testing.T) {
	h, _ := newTestHub(Options{})
	p := NodePrefix("node-1")
	if len(p) != NodePrefixLen || p == NodePrefix("node-2") || p != NodePrefix("node-1") {
		t.Fatalf("prefixes %q %q", p, NodePrefix("node-2"))
	}
	c := h.ConnectWith(engine.Principal{}, ConnOptions{IDPrefix: p})
	if id := c.ID(); id[:NodePrefixLen] != p || h.Lookup(id) != c {
		t.Fatalf("client id %q", id)
	}
}
