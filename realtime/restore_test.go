package realtime

import (
	"reflect"
	"strings"
	"testing"

	"svcd/engine"
	"svcd/fsm"
)

// TestSnapshotRestore: when the node's state is replaced by a snapshot,
// the changes it covers never passed through the hub. Connected clients
// are told to resync (replay_window_exceeded) and go on with the events
// after it; a resume from before the snapshot is refused; one from at or
// after it is not.
func TestSnapshotRestore(t *testing.T) {
	h, _ := newTestHub(Options{})
	live := h.Connect(engine.Principal{})
	live.Subscribe([]string{"posts"}, "")
	live.Start()
	waiting := h.Connect(engine.Principal{}) // connected, not subscribed yet
	ahead := h.Connect(engine.Principal{})
	if e := ahead.Resume("12"); e != nil {
		t.Fatal(e)
	}
	ahead.Subscribe([]string{"posts"}, "")
	ahead.Start()
	h.Observe([]fsm.Event{rec(2, engine.EvRecordCreate, "posts", "a", 1)})
	if msgs, _ := next(t, live); !reflect.DeepEqual(ids(msgs), []string{"2:create:posts"}) {
		t.Fatalf("before: %v", ids(msgs))
	}
	// Indexes 3-10 are installed from a snapshot.
	h.Observe([]fsm.Event{{Index: 10, Kind: fsm.KindRestore}})
	h.Observe([]fsm.Event{rec(11, engine.EvRecordCreate, "posts", "b", 1), rec(13, engine.EvRecordCreate, "posts", "c", 1)})
	if msgs, _ := next(t, live); !reflect.DeepEqual(ids(msgs), []string{CodeReplayExceeded}) {
		t.Fatalf("live after restore: %v", ids(msgs))
	}
	if msgs, _ := next(t, live); !reflect.DeepEqual(ids(msgs), []string{"11:create:posts", "13:create:posts"}) {
		t.Fatalf("live after restore: %v", ids(msgs))
	}
	waiting.Subscribe([]string{"posts"}, "")
	waiting.Start()
	if msgs, _ := next(t, waiting); len(msgs) == 0 || msgs[0].Code != CodeReplayExceeded {
		t.Fatalf("waiting: %v", ids(msgs))
	}
	if msgs, _ := next(t, ahead); !reflect.DeepEqual(ids(msgs), []string{"13:create:posts"}) {
		t.Fatalf("a client resumed past the snapshot: %v", ids(msgs))
	}
	for _, tc := range []struct {
		last string
		want []string
	}{
		{"2", []string{CodeReplayExceeded}},
		{"9", []string{CodeReplayExceeded}},
		{"10", []string{"11:create:posts", "13:create:posts"}},
		{"11", []string{"13:create:posts"}},
	} {
		c := h.Connect(engine.Principal{})
		if e := c.Resume(tc.last); e != nil {
			t.Fatal(e)
		}
		c.Subscribe([]string{"posts"}, "")
		c.Start()
		if msgs, _ := next(t, c); !reflect.DeepEqual(ids(msgs), tc.want) {
			t.Errorf("resume after %s: %v, want %v", tc.last, ids(msgs), tc.want)
		}
	}
}

// TestBackupRestoreResync: a backup restored (a KindRestore event of a
// replace command) tells every connection to resync with an explicit
// resync message whose id is the restore's index, then delivery goes on
// with the events after it; resuming from before it is refused, from it
// is not.
func TestBackupRestoreResync(t *testing.T) {
	h, _ := newTestHub(Options{})
	live := h.Connect(engine.Principal{})
	live.Subscribe([]string{"posts"}, "")
	live.Start()
	h.Observe([]fsm.Event{rec(2, engine.EvRecordCreate, "posts", "a", 1)})
	if msgs, _ := next(t, live); !reflect.DeepEqual(ids(msgs), []string{"2:create:posts"}) {
		t.Fatalf("before: %v", ids(msgs))
	}
	h.Observe([]fsm.Event{{Index: 7, Kind: fsm.KindRestore, Data: &fsm.Replaced{Name: "backup.restore"}}})
	h.Observe([]fsm.Event{rec(8, engine.EvRecordCreate, "posts", "b", 1)})
	msgs, _ := next(t, live)
	if len(msgs) != 1 || msgs[0].Type != "resync" || msgs[0].EventID != "7" || msgs[0].Code != ResyncRestore {
		t.Fatalf("after the restore: %+v", msgs)
	}
	b, err := msgs[0].MarshalJSON()
	if err != nil || !strings.Contains(string(b), `"type":"resync"`) || !strings.Contains(string(b), `"reason":"restore"`) ||
		!strings.Contains(string(b), `"eventId":"7"`) {
		t.Fatalf("resync frame %s (%v)", b, err)
	}
	if msgs, _ := next(t, live); !reflect.DeepEqual(ids(msgs), []string{"8:create:posts"}) {
		t.Fatalf("after the resync: %v", ids(msgs))
	}
	for _, tc := range []struct {
		last string
		want []string
	}{{"2", []string{CodeReplayExceeded}}, {"7", []string{"8:create:posts"}}} {
		c := h.Connect(engine.Principal{})
		if e := c.Resume(tc.last); e != nil {
			t.Fatal(e)
		}
		c.Subscribe([]string{"posts"}, "")
		c.Start()
		if msgs, _ := next(t, c); !reflect.DeepEqual(ids(msgs), tc.want) {
			t.Errorf("resume after %s: %v, want %v", tc.last, ids(msgs), tc.want)
		}
	}
}
