package suite

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestUnavailability(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ops := []opRecord{
		{OK, at(100)}, {OK, at(300)}, {Info, at(1500)}, {OK, at(2900)}, // gap 2.6 s (an Info does not count)
		{OK, at(3000)}, {Fail, at(3500)}, {OK, at(4200)}, // gap 1.2 s
	}
	u := unavailability(ops, t0, at(4500), time.Second)
	if u.Windows != 2 || u.Max != "2.6s" || u.P50 != "1.2s" {
		t.Fatalf("got %+v, want 2 windows, p50 1.2s, max 2.6s", u)
	}
	if u := unavailability(nil, t0, at(500), time.Second); u.Windows != 0 {
		t.Fatalf("a half-second run with no operation: %+v", u)
	}
}

// TestLocalCheck: a read on a node that acknowledged a newer write of the
// same register is stale; on another node, or begun before the ack, it is
// not judged stale.
func TestLocalCheck(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewLocal()
	l.index["k"] = map[int64]uint64{0: 5, 1: 10, 2: 20}
	l.acks = []localAck{{"n1", "k", 10, t0.Add(time.Second)}, {"n2", "k", 20, t0.Add(2 * time.Second)}}
	l.reads = []localRead{
		{"n1", "k", 1, t0.Add(3 * time.Second)},  // fresh: the acked write itself
		{"n1", "k", 2, t0.Add(3 * time.Second)},  // fresh: a later write
		{"n2", "k", 1, t0.Add(time.Second)},      // began before n2's ack
		{"n3", "k", 0, t0.Add(3 * time.Second)},  // n3 acknowledged nothing
		{"n1", "k", 77, t0.Add(3 * time.Second)}, // value of an unanswered write
	}
	if v := l.Check(context.Background(), nil); !v.Valid || v.Stale != 0 {
		t.Fatalf("fresh history judged %+v", v)
	}
	l.reads = append(l.reads, localRead{"n2", "k", 1, t0.Add(3 * time.Second)})
	v := l.Check(context.Background(), nil)
	if v.Valid || v.Stale != 1 || !strings.Contains(strings.Join(v.Notes, "\n"), "stale read on n2") {
		t.Fatalf("stale read not caught: %+v", v)
	}
}
