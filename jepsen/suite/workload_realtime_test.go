package suite

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRealtimeCheck: the realtime checker on hand-made histories passes a
// clean one (a reconnect included) and catches a gap, a duplicate, a
// reorder, an event of a record nobody created, an id that is not the
// write's index, and a replay_window_exceeded within retention; one after
// a longer outage excuses the creates it skipped.
func TestRealtimeCheck(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// Five creates a, b, c, d, e at indexes 10..14, sent at 1..5 s.
	var acked []rtWrite
	attempted := map[string]bool{}
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		acked = append(acked, rtWrite{ID: id, Index: uint64(10 + i), Invoked: at(1 + i)})
		attempted[id] = true
	}
	ev := func(id string, idx uint64) rtEventRec {
		return rtEventRec{ID: strconv.FormatUint(idx, 10), Index: idx, Type: "create", Collection: "c", Record: id, Node: "n1"}
	}
	all := []rtEventRec{ev("a", 10), ev("b", 11), ev("c", 12), ev("d", 13), ev("e", 14)}
	sub := func(evs ...rtEventRec) rtHistory { return rtHistory{Name: "s", Start: at(0), Events: evs} }
	check := func(h rtHistory) (rtFigures, string) {
		f, notes := checkRealtime("c", acked, attempted, nil, []rtHistory{h}, 30*time.Second)
		return f, strings.Join(notes, "\n")
	}

	clean := sub(all...)
	clean.Reconnects = 2
	if f, notes := check(clean); !f.valid() || f.Events != 5 || f.Reconnects != 2 {
		t.Fatalf("clean history judged %+v: %s", f, notes)
	}
	// A subscriber that started after b was sent owes nothing before c.
	late := sub(all[2:]...)
	late.Start = at(2)
	if f, notes := check(late); !f.valid() {
		t.Fatalf("late subscriber judged %+v: %s", f, notes)
	}

	cases := []struct {
		name string
		h    rtHistory
		want func(rtFigures) bool
		note string
	}{
		{"gap", sub(all[0], all[1], all[3], all[4]), func(f rtFigures) bool { return f.Missing == 1 }, "never got the create of c"},
		{"duplicate", sub(all[0], all[1], all[2], all[2], all[3], all[4]), func(f rtFigures) bool { return f.Duplicates == 1 && f.OutOfOrder == 0 }, "got record c twice"},
		{"reorder", sub(all[0], all[2], all[1], all[3], all[4]), func(f rtFigures) bool { return f.OutOfOrder == 1 && f.Duplicates == 0 }, "got 11 (from n1) after 12"},
		{"phantom", sub(append(all[:2:2], ev("ghost", 20))...), func(f rtFigures) bool { return f.Unexpected == 1 }, "which nobody created"},
		{"wrong id", sub(all[0], ev("b", 12), all[3], all[4]), func(f rtFigures) bool { return f.WrongID == 1 }, "as event 12; its write was index 11"},
		{"early window exceeded", func() rtHistory {
			h := sub(all[0], all[3], all[4])
			h.Exceeded = []rtExceeded{{At: at(4), After: 10, Outage: 5 * time.Second, Node: "n2"}}
			return h
		}(), func(f rtFigures) bool { return f.EarlyExceeded == 1 && f.Missing == 0 }, "n2 answered replay_window_exceeded after 5s"},
	}
	for _, c := range cases {
		f, notes := check(c.h)
		if f.valid() || !c.want(f) || !strings.Contains(notes, c.note) {
			t.Errorf("%s: judged %+v, notes %q; want it caught with %q", c.name, f, notes, c.note)
		}
	}

	// The same skip after an outage longer than retention is allowed, and
	// counted; it excuses only what was sent before the resync.
	h := sub(all[0], all[3], all[4])
	h.Exceeded = []rtExceeded{{At: at(4), After: 10, Outage: 40 * time.Second, Node: "n2"}}
	if f, notes := check(h); !f.valid() || f.WindowExceeded != 1 {
		t.Fatalf("window exceeded after a long outage judged %+v: %s", f, notes)
	}
	h = sub(all[0], all[3])
	h.Exceeded = []rtExceeded{{At: at(4), After: 10, Outage: 40 * time.Second, Node: "n2"}}
	if f, _ := check(h); f.valid() || f.Missing != 1 {
		t.Fatalf("e, sent after the resync, missing: judged %+v", f)
	}
}
