package suite

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The realtime workload's checker: a pure function of the writers' and
// the subscribers' histories, so hand-made histories test it.

// rtWrite is an acknowledged create: the record id, the Raft index its
// answer carried (X-Svc-Index, which its event id must equal) and when the
// request was sent.
type rtWrite struct {
	ID      string
	Index   uint64
	Invoked time.Time
}

// rtEventRec is one record event a subscriber received.
type rtEventRec struct {
	ID         string // "<index>" or "<index>.<n>"
	Index      uint64
	Seq        uint32
	Type       string // create, update, delete
	Collection string
	Record     string
	Node       string
}

// rtExceeded is a replay_window_exceeded the subscriber accepted: it
// resynced (no node had the events after After) and took the live stream
// from At on. Outage is how long it had received nothing.
type rtExceeded struct {
	At     time.Time
	After  uint64
	Outage time.Duration
	Node   string
}

// rtHistory is what one subscriber saw over all its connections.
type rtHistory struct {
	Name string
	// Start is when its first subscription was confirmed: every create
	// sent after it must reach it.
	Start      time.Time
	Events     []rtEventRec
	Reconnects int
	Exceeded   []rtExceeded
	// YoungRing are replay_window_exceeded answers, within retention, of
	// nodes restarted or added since the run began (their ring starts at
	// their start): the subscriber tried another node.
	YoungRing []string
	// BadRefusals are such answers from a node that never restarted.
	BadRefusals []string
	// Slow counts slow_consumer drops.
	Slow     int
	Problems []string
}

// rtFigures are the realtime workload's counts over all subscribers.
type rtFigures struct {
	Subscribers, Events, Reconnects int
	Missing, Duplicates, OutOfOrder int
	// WindowExceeded are the replay_window_exceeded answers accepted;
	// EarlyExceeded those that came within retention (plus refusals by a
	// node that never restarted), which a run whose faults are all shorter
	// than retention must not have.
	WindowExceeded, EarlyExceeded, YoungRing int
	// Unexpected are events of records nobody tried to create (or that do
	// not exist), of another collection or of another kind than create;
	// WrongID are creates whose id is not the write's Raft index.
	Unexpected, WrongID int
	Slow, Problems      int
}

func (f rtFigures) valid() bool {
	return f.Missing == 0 && f.Duplicates == 0 && f.OutOfOrder == 0 && f.EarlyExceeded == 0 &&
		f.Unexpected == 0 && f.WrongID == 0 && f.Problems == 0
}

func (f rtFigures) String() string {
	return fmt.Sprintf("subscribers %d, events received %d, reconnects %d, missing %d, duplicates %d, out-of-order %d, "+
		"window-exceeded %d (within retention %d; young-ring refusals retried elsewhere %d), unexpected %d, wrong ids %d, slow-consumer drops %d, problems %d",
		f.Subscribers, f.Events, f.Reconnects, f.Missing, f.Duplicates, f.OutOfOrder,
		f.WindowExceeded, f.EarlyExceeded, f.YoungRing, f.Unexpected, f.WrongID, f.Slow, f.Problems)
}

// rtRequired reports whether subscriber h must have received w's event:
// w was sent after h's first subscription was in effect, and no accepted
// replay_window_exceeded excuses it (sent before the resync, after the
// last event h had then).
func rtRequired(h rtHistory, w rtWrite) bool {
	if h.Start.IsZero() || !w.Invoked.After(h.Start) {
		return false
	}
	for _, e := range h.Exceeded {
		if w.Index > e.After && w.Invoked.Before(e.At) {
			return false
		}
	}
	return true
}

// checkRealtime judges the subscribers' histories against the
// acknowledged creates of coll. attempted are every record id a writer
// sent; exists, when not nil, the records the collection holds at the end.
// It returns the figures and up to a few examples of each violation.
func checkRealtime(coll string, acked []rtWrite, attempted, exists map[string]bool, subs []rtHistory, retention time.Duration) (rtFigures, []string) {
	f := rtFigures{Subscribers: len(subs)}
	var notes []string
	examples := map[string]int{}
	note := func(kind, format string, args ...any) {
		if examples[kind]++; examples[kind] <= 3 {
			notes = append(notes, kind+": "+fmt.Sprintf(format, args...))
		}
	}
	byID := make(map[string]rtWrite, len(acked))
	for _, w := range acked {
		byID[w.ID] = w
	}
	for _, h := range subs {
		f.Events += len(h.Events)
		f.Reconnects += h.Reconnects
		f.Slow += h.Slow
		f.YoungRing += len(h.YoungRing)
		if h.Start.IsZero() {
			f.Problems++
			note("problem", "%s never subscribed", h.Name)
		}
		seen := map[string]string{}
		for i, ev := range h.Events {
			if i > 0 {
				p := h.Events[i-1]
				switch {
				case p.Index == ev.Index && p.Seq == ev.Seq:
					// counted below as the record's second delivery
				case p.Index > ev.Index || p.Index == ev.Index && p.Seq > ev.Seq:
					f.OutOfOrder++
					note("out-of-order", "%s got %s (from %s) after %s (from %s)", h.Name, ev.ID, ev.Node, p.ID, p.Node)
				}
			}
			if prev, ok := seen[ev.Record]; ok {
				f.Duplicates++
				note("duplicate", "%s got record %s twice: events %s and %s (from %s)", h.Name, ev.Record, prev, ev.ID, ev.Node)
			}
			seen[ev.Record] = ev.ID
			switch {
			case ev.Collection != coll || ev.Type != "create":
				f.Unexpected++
				note("unexpected", "%s got %s of %s/%s (event %s from %s); only creates of %s were made", h.Name, ev.Type, ev.Collection, ev.Record, ev.ID, ev.Node, coll)
			case !attempted[ev.Record] || exists != nil && !exists[ev.Record]:
				f.Unexpected++
				note("unexpected", "%s got the create of %s (event %s from %s), which nobody created", h.Name, ev.Record, ev.ID, ev.Node)
			}
			if w, ok := byID[ev.Record]; ok && (ev.Index != w.Index || ev.Seq != 0) {
				f.WrongID++
				note("wrong id", "%s got the create of %s as event %s; its write was index %d", h.Name, ev.Record, ev.ID, w.Index)
			}
		}
		for _, w := range acked {
			if _, ok := seen[w.ID]; !ok && rtRequired(h, w) {
				f.Missing++
				note("missing", "%s never got the create of %s (index %d)", h.Name, w.ID, w.Index)
			}
		}
		f.WindowExceeded += len(h.Exceeded)
		for _, e := range h.Exceeded {
			if e.Outage <= retention {
				f.EarlyExceeded++
				note("window exceeded", "%s: %s answered replay_window_exceeded after %s without events (retention %s)", h.Name, e.Node, e.Outage.Round(time.Millisecond), retention)
			}
		}
		for _, r := range h.BadRefusals {
			f.EarlyExceeded++
			note("window exceeded", "%s: %s", h.Name, r)
		}
		f.Problems += len(h.Problems)
		for _, p := range h.Problems {
			note("problem", "%s: %s", h.Name, p)
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(examples)) {
		if n := examples[kind]; n > 3 {
			notes = append(notes, fmt.Sprintf("%s: %d more", kind, n-3))
		}
	}
	return f, notes
}

// ParseEventID splits an event id "<index>" or "<index>.<n>" (the jepsen
// cluster tests read ids with it too).
func ParseEventID(s string) (index uint64, seq uint32, ok bool) {
	is, ns, dotted := strings.Cut(s, ".")
	index, err := strconv.ParseUint(is, 10, 64)
	if err != nil || index == 0 {
		return 0, 0, false
	}
	if dotted {
		n, err := strconv.ParseUint(ns, 10, 32)
		if err != nil || n == 0 {
			return 0, 0, false
		}
		seq = uint32(n)
	}
	return index, seq, true
}
