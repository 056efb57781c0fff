package realtime

import (
	"encoding/json"
	"reflect"
	"testing"

	"svcd/engine"
	"svcd/fsm"
)

func flagEvent(index uint64, kind, op, key string) fsm.Event {
	return fsm.Event{Index: index, Kind: engine.EvFlagChange, Data: &engine.FlagChange{Kind: kind, Op: op, Key: key}}
}

// TestFlagsTopic: flag and segment changes reach __flags subscribers, in
// log order with record events, under the same ids on replay; record
// topics (* included) never carry them, and filters do not apply.
func TestFlagsTopic(t *testing.T) {
	h, _ := newTestHub(Options{})
	flags := h.Connect(engine.Principal{})
	if got, err := flags.Subscribe([]string{" __flags", "posts"}, "n > 100"); err != nil || !reflect.DeepEqual(got, []string{"__flags", "posts"}) {
		t.Fatalf("subscribe: %v %v", got, err)
	}
	flags.Start()
	all := h.Connect(engine.Principal{Kind: engine.AdminPrincipal})
	if _, err := all.Subscribe([]string{"*"}, ""); err != nil {
		t.Fatal(err)
	}
	all.Start()
	for _, bad := range []string{"__FLAGS", "__flags.update", "__flags/x"} {
		if _, err := flags.Subscribe([]string{bad}, ""); err == nil || err.Code != CodeInvalidTopics {
			t.Errorf("%q: got %v, want invalid_topics", bad, err)
		}
	}
	h.Observe([]fsm.Event{flagEvent(7, "flag", "update", "new-ui"), rec(7, engine.EvRecordCreate, "posts", "p1", 500), rec(8, engine.EvRecordCreate, "posts", "p2", 1)})
	h.Observe([]fsm.Event{flagEvent(9, "segment", "delete", "beta")})

	msgs, err := next(t, flags)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		got = append(got, string(b))
	}
	want := []string{
		`{"eventId":"7","key":"new-ui","kind":"flag","op":"update","type":"flags"}`,
		`{"collection":"posts","eventId":"7.1","record":"p1","type":"create"}`,
		`{"eventId":"9","key":"beta","kind":"segment","op":"delete","type":"flags"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flags subscriber got\n%v\nwant\n%v", got, want)
	}
	if msgs, _ := next(t, all); !reflect.DeepEqual(ids(msgs), []string{"7.1:create:posts", "8:create:posts"}) {
		t.Fatalf("* subscriber got %v", ids(msgs))
	}
	// A resume replays flag events like record events.
	late := h.Connect(engine.Principal{})
	if e := late.Resume("7.1"); e != nil {
		t.Fatal(e)
	}
	late.Subscribe([]string{"__flags"}, "")
	late.Start()
	if msgs, _ := next(t, late); len(msgs) != 1 || msgs[0].EventID != "9" || msgs[0].Flag.Key != "beta" {
		t.Fatalf("replay got %+v", msgs)
	}
}
