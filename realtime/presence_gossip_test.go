package realtime

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"svcd/engine"
)

// The presence protocol is driven here through its real entry points
// (GossipMessage, GossipNodeJoined/Left, GossipLocalState): the other
// node is the bytes it would send. wire records what this node sends.
// Presence across real nodes is tested in jepsen/presence_cluster_test.go.

type wire struct {
	mu   sync.Mutex
	sent []string // "to:type" for sends, "*:type" for broadcasts
	msgs []wireMsg
}

func (w *wire) record(to string, b []byte) {
	var m wireMsg
	_ = json.Unmarshal(b, &m)
	w.mu.Lock()
	w.sent = append(w.sent, to+":"+m.Type)
	w.msgs = append(w.msgs, m)
	w.mu.Unlock()
}

func (w *wire) GossipSend(node string, b []byte) error { w.record(node, b); return nil }
func (w *wire) GossipBroadcast(b []byte)               { w.record("*", b) }

// waitSent waits until what was sent includes want, in any order.
func (w *wire) waitSent(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		w.mu.Lock()
		have := map[string]int{}
		for _, s := range w.sent {
			have[s]++
		}
		w.mu.Unlock()
		ok := true
		for _, s := range want {
			if have[s] == 0 {
				ok = false
			}
			have[s]--
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sent %v, want %v among them", w.sent, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *wire) reset() {
	w.mu.Lock()
	w.sent, w.msgs = nil, nil
	w.mu.Unlock()
}

func (w *wire) lastDelta() *wireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.msgs) - 1; i >= 0; i-- {
		if w.msgs[i].Type == wireDelta {
			return &w.msgs[i]
		}
	}
	return nil
}

func join(conn, key string, v uint64) presEntry {
	return presEntry{Channel: "room", Conn: conn, Version: v, Meta: &Meta{ConnID: conn, Key: key, State: json.RawMessage(`{}`)}}
}

func leave(conn string, v uint64) presEntry {
	return presEntry{Channel: "room", Conn: conn, Version: v}
}

func feed(p *Presence, m wireMsg) {
	b, _ := json.Marshal(m)
	p.GossipMessage(b)
}

// presenceEvents reads the presence events waiting for c as "event:key".
func presenceEvents(t *testing.T, c *Conn) []string {
	t.Helper()
	var out []string
	for {
		msgs, err := next(t, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return out
		}
		for _, m := range msgs {
			if m.Type == "presence" {
				out = append(out, m.Event+":"+m.Meta.Key)
			}
		}
	}
}

func stateKeys(p *Presence) []string {
	var out []string
	for k, metas := range p.State("room") {
		out = append(out, fmt.Sprintf("%s*%d", k, len(metas)))
	}
	sort.Strings(out)
	return out
}

func newGossipHub(t *testing.T) (*Hub, *clock, *wire, *Conn) {
	h, clk := newTestHub(Options{})
	w := &wire{}
	h.Presence().Attach("a", w)
	t.Cleanup(h.Presence().Close)
	obs := h.Connect(engine.Principal{})
	t.Cleanup(obs.Close)
	if e := obs.ObservePresence("room"); e != nil {
		t.Fatal(e)
	}
	presenceEvents(t, obs) // the empty state
	return h, clk, w, obs
}

func TestPresenceGossipOrdering(t *testing.T) {
	h, clk, w, obs := newGossipHub(t)
	p := h.Presence()
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 1, From: 0, Version: 2, Entries: []presEntry{join("x1", "k1", 1), join("x2", "k2", 2)}})
	if got := presenceEvents(t, obs); !reflect.DeepEqual(got, []string{"join:k1", "join:k2"}) {
		t.Fatalf("events %v", got)
	}
	// x1's leave (v4) overtakes its update (v3): the update is stale when
	// it arrives; the gap before v4 asks b for its full state.
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 1, From: 3, Version: 4, Entries: []presEntry{leave("x1", 4)}})
	w.waitSent(t, "b:s")
	upd := join("x1", "k1", 3)
	upd.Meta.State = json.RawMessage(`{"late":true}`)
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 1, From: 2, Version: 3, Entries: []presEntry{upd}})
	if got := presenceEvents(t, obs); !reflect.DeepEqual(got, []string{"leave:k1"}) {
		t.Fatalf("events %v", got)
	}
	if got := stateKeys(p); !reflect.DeepEqual(got, []string{"k2*1"}) {
		t.Fatalf("state %v", got)
	}
	// A second gap within a second does not ask again; later it does.
	w.reset()
	feed(p, wireMsg{Type: wireHeartbeat, Node: "b", Epoch: 1, Version: 9})
	time.Sleep(20 * time.Millisecond)
	if len(w.sent) != 0 {
		t.Fatalf("asked again within a second: %v", w.sent)
	}
	clk.t = clk.t.Add(2 * time.Second)
	feed(p, wireMsg{Type: wireHeartbeat, Node: "b", Epoch: 1, Version: 9})
	w.waitSent(t, "b:s")

	// b's full state at v5: x2 is there, x3 joined; a delta older than
	// it (x1's join at v1, replayed) and an older full state change
	// nothing.
	feed(p, wireMsg{Type: wireFull, Node: "b", Epoch: 1, Version: 5, Entries: []presEntry{join("x2", "k2", 2), join("x3", "k3", 5)}})
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 1, From: 0, Version: 1, Entries: []presEntry{join("x1", "k1", 1)}})
	feed(p, wireMsg{Type: wireFull, Node: "b", Epoch: 1, Version: 3, Entries: []presEntry{join("x1", "k1", 1)}})
	if got := presenceEvents(t, obs); !reflect.DeepEqual(got, []string{"join:k3"}) {
		t.Fatalf("events %v", got)
	}
	// A full state without x2 (it left unseen) removes it.
	feed(p, wireMsg{Type: wireFull, Node: "b", Epoch: 1, Version: 7, Entries: []presEntry{join("x3", "k3", 5)}})
	if got := presenceEvents(t, obs); !reflect.DeepEqual(got, []string{"leave:k2"}) {
		t.Fatalf("events %v", got)
	}
	// A key change is a leave and a join.
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 1, From: 7, Version: 8, Entries: []presEntry{join("x3", "k3b", 8)}})
	if got := presenceEvents(t, obs); !reflect.DeepEqual(got, []string{"leave:k3", "join:k3b"}) {
		t.Fatalf("events %v", got)
	}
}

func TestPresenceGossipNodes(t *testing.T) {
	h, _, w, obs := newGossipHub(t)
	p := h.Presence()
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 1, Version: 2, Entries: []presEntry{join("x1", "k1", 1), join("x2", "k2", 2)}})
	feed(p, wireMsg{Type: wireDelta, Node: "c", Epoch: 1, Version: 1, Entries: []presEntry{join("y1", "k1", 1)}})
	presenceEvents(t, obs)
	if got := stateKeys(p); !reflect.DeepEqual(got, []string{"k1*2", "k2*1"}) {
		t.Fatalf("state %v", got)
	}
	// b restarted (a newer epoch): its old presences leave.
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 2, Version: 1, Entries: []presEntry{join("x9", "k9", 1)}})
	got := presenceEvents(t, obs)
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"join:k9", "leave:k1", "leave:k2"}) {
		t.Fatalf("events %v", got)
	}
	// A message of b's older incarnation is ignored.
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 1, From: 2, Version: 3, Entries: []presEntry{join("x3", "k3", 3)}})
	// b dies: its presences leave; what it sent before dying and arrives
	// late is ignored, until b is seen alive again.
	p.GossipNodeLeft("b")
	feed(p, wireMsg{Type: wireDelta, Node: "b", Epoch: 2, From: 1, Version: 2, Entries: []presEntry{join("x4", "k4", 2)}})
	if got := presenceEvents(t, obs); !reflect.DeepEqual(got, []string{"leave:k9"}) {
		t.Fatalf("events %v", got)
	}
	w.reset()
	p.GossipNodeJoined("b")
	w.waitSent(t, "b:f", "b:s")
	feed(p, wireMsg{Type: wireFull, Node: "b", Epoch: 2, Version: 2, Entries: []presEntry{join("x9", "k9", 1), join("x4", "k4", 2)}})
	got = presenceEvents(t, obs)
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"join:k4", "join:k9"}) {
		t.Fatalf("events %v", got)
	}
	// Nonsense is ignored: not JSON, no node, our own echo, an entry
	// whose meta names another connection, an unknown type.
	for _, b := range []string{`garbage`, `{"t":"d","e":1,"v":1}`, `{"t":"d","n":"a","e":1,"v":1,"x":[{"c":"room","k":"z","v":1,"m":{"conn_id":"z","key":"me"}}]}`,
		`{"t":"d","n":"c","e":1,"f":1,"v":2,"x":[{"c":"room","k":"z","v":2,"m":{"conn_id":"other","key":"forged"}}]}`, `{"t":"zz","n":"c","e":1}`} {
		p.GossipMessage([]byte(b))
	}
	if got := presenceEvents(t, obs); len(got) != 0 {
		t.Fatalf("nonsense produced events %v", got)
	}
	// The push/pull payload is the full local state.
	local := h.Connect(engine.Principal{Kind: engine.User, ID: "u1"})
	defer local.Close()
	if e := local.Track("room", "", json.RawMessage(`{"x":1}`)); e != nil {
		t.Fatal(e)
	}
	var full wireMsg
	if err := json.Unmarshal(p.GossipLocalState(), &full); err != nil || full.Type != wireFull || full.Node != "a" || len(full.Entries) != 1 ||
		full.Entries[0].Meta.Key != "u1" || !reflect.DeepEqual(full.Entries[0].Meta.Identity, &Identity{ID: "u1", Type: "user"}) {
		t.Fatalf("local state %+v (%v)", full, err)
	}
}

func TestPresenceGossipLocalChanges(t *testing.T) {
	h, _, w, obs := newGossipHub(t)
	c := h.Connect(engine.Principal{})
	if e := c.Track("room", "me", json.RawMessage(`{"v":1}`)); e != nil {
		t.Fatal(e)
	}
	w.waitSent(t, "*:d")
	d := w.lastDelta()
	if d.Node != "a" || d.From != 0 || d.Version != 1 || len(d.Entries) != 1 || d.Entries[0].Meta == nil || d.Entries[0].Meta.Key != "me" {
		t.Fatalf("delta %+v", d)
	}
	w.reset()
	c.Close() // its presence leaves, here and in the next delta
	w.waitSent(t, "*:d")
	if d := w.lastDelta(); d.From != 1 || d.Version != 2 || len(d.Entries) != 1 || d.Entries[0].Meta != nil {
		t.Fatalf("delta %+v", d)
	}
	if got := presenceEvents(t, obs); !reflect.DeepEqual(got, []string{"join:me", "leave:me"}) {
		t.Fatalf("events %v", got)
	}
	// Heartbeats carry the last version sent.
	w.waitSent(t, "*:h")
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if m.Type == wireHeartbeat && m.Version != 2 {
			t.Fatalf("heartbeat %+v", m)
		}
	}
}

func FuzzPresenceGossip(f *testing.F) {
	for _, s := range []string{
		`{"t":"d","n":"b","e":1,"v":2,"x":[{"c":"room","k":"x1","v":1,"m":{"conn_id":"x1","key":"k1","state":{}}}]}`,
		`{"t":"f","n":"b","e":1,"v":5,"x":[{"c":"room","k":"x1","v":5}]}`,
		`{"t":"h","n":"b","e":2,"v":9}`,
		`{"t":"s","n":"c","e":1}`,
	} {
		f.Add([]byte(s), []byte(`{"t":"d","n":"b","e":1,"f":2,"v":3,"x":[{"c":"room","k":"x1","v":3}]}`))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		h, _ := newTestHub(Options{})
		p := h.Presence()
		p.Attach("a", &wire{})
		defer p.Close()
		p.GossipMessage(a)
		p.GossipMessage(b)
		p.GossipMergeState(a)
		// Whatever arrived, the state is well formed: every meta sits
		// under its own key and names a connection.
		for ch := range map[string]bool{"room": true, "": true} {
			for key, metas := range p.State(ch) {
				for _, m := range metas {
					if m.Key != key || m.ConnID == "" {
						t.Fatalf("meta %+v under %q", m, key)
					}
				}
			}
		}
	})
}
