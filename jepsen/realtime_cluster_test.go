package jepsen_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// The realtime acceptance tests of issue 7 on real processes: record events
// come from every node's own state machine, stamped with the Raft index, so
// a subscriber gets the same events with the same ids from any node and can
// resume on another node after its own was killed.

const (
	// rtWait bounds waiting for events a subscriber should get.
	rtWait = 10 * time.Second
	// rtMidStream is how many events the first subscriber gets before its
	// node is killed.
	rtMidStream = 30
	// rtGapWrites is how many writes are acknowledged while the
	// subscriber is disconnected, at least.
	rtGapWrites = 20
)

var rtTopics = []string{"items"}

// TestRealtimeSSECrossNode: an SSE subscriber on n2 gets every create made
// through n3, in order, with strictly increasing ids equal to the writes'
// Raft indexes (X-Svc-Index).
func TestRealtimeSSECrossNode(t *testing.T) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, itemsCollection)
	nodes := c.Nodes()
	n2, n3 := nodes[1], nodes[2]
	sub, err := sseSubscribe(n2.Name, n2.URL(), rtTopics, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.WaitReady(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	const writes = 60
	type write struct {
		id  string
		idx uint64
	}
	var want []write
	w := c.Client(n3)
	for i := range writes {
		resp := mustDo(t, w, "POST", "/api/v1/items", map[string]any{"seq": i + 1, "writer": n3.Name}, http.StatusCreated)
		rec, err := decodeRecord(resp)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Index() == 0 {
			t.Fatalf("write %d: no X-Svc-Index", i)
		}
		want = append(want, write{rec.ID, resp.Index()})
	}
	start := time.Now()
	if !sub.WaitFor(rtWait, func(evs []rtEvent) bool { return len(evs) >= writes }) {
		t.Fatalf("n2 got %d of %d events within %s (stream: %v)", len(sub.Events()), writes, rtWait, sub.Err())
	}
	t.Logf("n2 had all %d creates made through n3 %s after the last was acknowledged", writes, time.Since(start).Round(time.Millisecond))
	// Nothing more arrives.
	time.Sleep(200 * time.Millisecond)
	evs := sub.Events()
	if len(evs) != writes {
		t.Errorf("n2 got %d events for %d creates", len(evs), writes)
	}
	for i, ev := range evs[:min(len(evs), writes)] {
		if ev.Type != "create" || ev.RecordID != want[i].id {
			t.Errorf("event %d: %s %s of record %s, want create of %s", i, ev.ID, ev.Type, ev.RecordID, want[i].id)
		}
		if ev.ID != strconv.FormatUint(want[i].idx, 10) {
			t.Errorf("event %d: id %s, want the write's Raft index %d", i, ev.ID, want[i].idx)
		}
	}
	checkIncreasing(t, evs)
	if p := sub.Problems(); len(p) > 0 {
		t.Errorf("problems: %s", strings.Join(p, "; "))
	}
}

// TestRealtimeSSEResumeAfterKill: an SSE subscriber on a follower records
// events while two writers write through the other nodes; the follower is
// SIGKILLed mid-stream; the subscriber reconnects to another node with
// Last-Event-ID. Together the two streams hold every record created, once,
// in strictly increasing id order, the writes acknowledged while it was
// disconnected included.
func TestRealtimeSSEResumeAfterKill(t *testing.T) {
	runRealtimeResume(t, sseSubscribe, false, false)
}

// TestRealtimeWSResumeAfterKill is the same with a WebSocket subscriber on
// the leader: killing it also fails over the writes.
func TestRealtimeWSResumeAfterKill(t *testing.T) {
	runRealtimeResume(t, wsSubscribe, true, false)
}

// TestRealtimeSSEResumeOnRestartedNode: the subscriber comes back to its
// own node once it restarted. That node's ring starts at its restart: the
// events it applied before the kill are gone with its memory, so unless
// the restart replays them it must answer replay_window_exceeded — never a
// silent gap.
func TestRealtimeSSEResumeOnRestartedNode(t *testing.T) {
	runRealtimeResume(t, sseSubscribe, false, true)
}

// rtWriteLog is what the writers did.
type rtWriteLog struct {
	mu      sync.Mutex
	acked   map[string]time.Time // record id -> when it was acknowledged
	unknown map[string]string    // record id -> the answer of a write not acknowledged
}

func (l *rtWriteLog) ackedBetween(from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.acked {
		if at.After(from) && (to.IsZero() || at.Before(to)) {
			n++
		}
	}
	return n
}

// runRealtimeResume kills the subscriber's node (the leader or a
// follower) mid-stream and resumes on another node, or on the same node
// restarted (restart).
func runRealtimeResume(t *testing.T, subscribe rtSubscribeFunc, killLeader, restart bool) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, itemsCollection)
	leader := c.MustLeader(t, leaderTimeout)
	x := leader
	if !killLeader {
		x = others(c.Nodes(), leader)[0]
	}
	rest := others(c.Nodes(), x)
	back := rest[len(rest)-1] // the node the subscriber resumes on
	if restart {
		back = x
	}
	t.Logf("subscriber on %s (leader %s), resumes on %s", x.Name, leader.Name, back.Name)

	sub1, err := subscribe(x.Name, x.URL(), rtTopics, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub1.Close()
	if err := sub1.WaitReady(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Two writers, one through each node but x, at a pace the replay
	// after the gap stays far below the server's 1024-event lag limit.
	seed := uint64(time.Now().UnixNano())
	wlog := &rtWriteLog{acked: map[string]time.Time{}, unknown: map[string]string{}}
	// Writers finish the write they are in when stopped: one cancelled
	// on the way could still commit after the records are listed.
	var stop atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w, nd := range rest {
		cl := c.Client(nd)
		cl.Timeout = clusterWriteTimeout
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for attempt := 0; !stop.Load(); attempt++ {
				id := writeID(w, attempt, rng)
				resp, err := cl.Do(context.Background(), "POST", "/api/v1/items", map[string]any{"id": id, "seq": attempt + 1, "writer": nd.Name})
				wlog.mu.Lock()
				switch {
				case err != nil:
					wlog.unknown[id] = fmt.Sprintf("%s: %v", nd.Name, err)
				case resp.Status == http.StatusCreated:
					wlog.acked[id] = time.Now()
				default:
					wlog.unknown[id] = nd.Name + ": " + resp.String()
				}
				wlog.mu.Unlock()
				pause(ctx, 10*time.Millisecond)
			}
		}()
	}
	stopWriters := func() { stop.Store(true); cancel(); wg.Wait() }
	defer stopWriters()

	if !sub1.WaitFor(rtWait, func(evs []rtEvent) bool { return len(evs) >= rtMidStream }) {
		t.Fatalf("%s: %d events within %s (stream: %v)", x.Name, len(sub1.Events()), rtWait, sub1.Err())
	}
	killAt := time.Now()
	c.Kill(t, x.Name)
	select {
	case <-sub1.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the stream from %s did not end within 5 s of its SIGKILL", x.Name)
	}
	first := sub1.Events()
	last := first[len(first)-1]
	t.Logf("%s killed after %d events; last id %s; stream ended with %v", x.Name, len(first), last.ID, sub1.Err())

	// Stay away until writes were acknowledged meanwhile.
	deadline := time.Now().Add(rtWait)
	for wlog.ackedBetween(killAt, time.Time{}) < rtGapWrites {
		if time.Now().After(deadline) {
			t.Fatalf("only %d writes acknowledged within %s of the kill", wlog.ackedBetween(killAt, time.Time{}), rtWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if restart {
		c.Restart(t, x.Name)
	}
	reconnectAt := time.Now()
	sub2, err := subscribe(back.Name, back.URL(), rtTopics, last.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sub2.Close()
	if err := sub2.WaitReady(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	gap := wlog.ackedBetween(killAt, reconnectAt)
	time.Sleep(500 * time.Millisecond)
	stopWriters()

	// The records that exist are the truth: a write without an answer may
	// or may not have happened.
	lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer lcancel()
	recs, err := harness.ListAll(lctx, c.Admin(back).Strong(), "items", nil)
	if err != nil {
		t.Fatalf("list items on %s: %v", back.Name, err)
	}
	exists := map[string]bool{}
	for _, r := range recs {
		exists[r.ID] = true
	}
	wlog.mu.Lock()
	acked, unknown := len(wlog.acked), maps.Clone(wlog.unknown)
	for id := range wlog.acked {
		if !exists[id] {
			t.Errorf("acknowledged write %s is not in the collection", id)
		}
	}
	wlog.mu.Unlock()

	seen := func(evs []rtEvent) map[string]bool {
		m := map[string]bool{}
		for _, ev := range evs {
			m[ev.RecordID] = true
		}
		return m
	}
	firstSeen := seen(first)
	exceeded := false
	for _, p := range sub2.Problems() {
		exceeded = exceeded || strings.Contains(p, "replay_window_exceeded")
	}
	if exceeded {
		if !restart {
			t.Errorf("%s answered replay_window_exceeded within retention: %v", back.Name, sub2.Problems())
		}
		// The client was told to resync: live events follow, in order.
		second := sub2.Events()
		t.Logf("%s answered replay_window_exceeded to Last-Event-ID %s; %d live events followed", back.Name, last.ID, len(second))
		checkIncreasing(t, append(slices.Clone(first), second...))
		return
	}
	complete := func(evs []rtEvent) bool {
		s := seen(evs)
		for id := range exists {
			if !firstSeen[id] && !s[id] {
				return false
			}
		}
		return true
	}
	if !sub2.WaitFor(rtWait, complete) {
		t.Errorf("%s did not deliver every missing record within %s (stream: %v)", back.Name, rtWait, sub2.Err())
	}
	time.Sleep(200 * time.Millisecond) // nothing more arrives
	second := sub2.Events()
	t.Logf("%d records (%d acknowledged, %d writes without an answer or refused); %d events from %s, %d from %s; %d acknowledged while disconnected",
		len(recs), acked, len(unknown), len(first), x.Name, len(second), back.Name, gap)
	for id, why := range unknown {
		t.Logf("write %s not acknowledged: %s", id, why)
	}

	all := append(slices.Clone(first), second...)
	checkIncreasing(t, all)
	got := map[string]string{}
	for _, ev := range all {
		if ev.Type != "create" {
			t.Errorf("event %s from %s: %s of %s, only creates were made", ev.ID, ev.Node, ev.Type, ev.RecordID)
		}
		if prev, ok := got[ev.RecordID]; ok {
			t.Errorf("record %s delivered twice: event %s and %s", ev.RecordID, prev, ev.Node+":"+ev.ID)
		}
		got[ev.RecordID] = ev.Node + ":" + ev.ID
		if !exists[ev.RecordID] {
			if _, ok := unknown[ev.RecordID]; ok {
				// A write without an answer that committed after the list.
				t.Logf("event %s from %s: create of %s, a write without an answer, committed after the list", ev.ID, ev.Node, ev.RecordID)
				continue
			}
			t.Errorf("event %s from %s is the create of %s, which does not exist", ev.ID, ev.Node, ev.RecordID)
		}
	}
	var missing []string
	for id := range exists {
		if _, ok := got[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("%d of %d records never delivered: %v", len(missing), len(recs), missing[:min(len(missing), 20)])
	}
	if gap < rtGapWrites {
		t.Errorf("only %d writes acknowledged while the subscriber was away", gap)
	}
	for _, s := range []*rtSub{sub1, sub2} {
		if p := s.Problems(); len(p) > 0 {
			t.Errorf("problems: %s", strings.Join(p, "; "))
		}
	}
}

// checkIncreasing fails the test unless the event ids strictly increase.
func checkIncreasing(t *testing.T, evs []rtEvent) {
	t.Helper()
	var bad []string
	for i := 1; i < len(evs); i++ {
		if !rtLess(evs[i-1], evs[i]) {
			bad = append(bad, fmt.Sprintf("%s:%s then %s:%s", evs[i-1].Node, evs[i-1].ID, evs[i].Node, evs[i].ID))
		}
	}
	if len(bad) > 0 {
		t.Errorf("event ids not strictly increasing (%d times): %v", len(bad), bad[:min(len(bad), 10)])
	}
}
