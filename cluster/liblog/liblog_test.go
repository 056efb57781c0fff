package liblog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"

	"svcd/cluster/liblog"
)

// records is a JSON log written at DEBUG, read back record by record.
type records struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *records) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// take returns the records written since the last take.
func (r *records) take(t *testing.T) []map[string]any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON record: %q: %v", line, err)
		}
		out = append(out, m)
	}
	r.buf.Reset()
	return out
}

// clock is a settable time for the outage rule.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newBridge(opts liblog.Options) (*liblog.Bridge, *records) {
	out := &records{}
	log := slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", "n1")
	return liblog.New(log, opts), out
}

// one asserts that exactly one record was written, at level, with msg,
// naming node n1, and returns it.
func one(t *testing.T, out *records, level, msg string) map[string]any {
	t.Helper()
	recs := out.take(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1 (%s %q): %v", len(recs), level, msg, recs)
	}
	r := recs[0]
	if r["level"] != level || r["msg"] != msg || r["node"] != "n1" {
		t.Fatalf("record %v, want level %s, msg %q, node n1", r, level, msg)
	}
	return r
}

// TestRaftPeerFailures: raft's failures to reach a peer whose process is
// gone are INFO once, then DEBUG, for Grace; past it they are errors
// again, saying for how long. A new outage (after a quiet spell) starts
// over. Other errors (a timeout, a failed snapshot) keep their level.
func TestRaftPeerFailures(t *testing.T) {
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	b, out := newBridge(liblog.Options{Now: c.Now})
	hl := b.Raft()
	n2 := raft.Server{ID: "n2", Address: "10.0.0.2:8300", Suffrage: raft.Voter}
	refused := errors.New("dial tcp 10.0.0.2:8300: connect: connection refused")

	hl.Error("failed to appendEntries to", "peer", n2, "error", refused)
	r := one(t, out, "INFO", "failed to appendEntries to")
	if r["module"] != "raft" || r["err"] != refused.Error() || r["unreachable_for"] != "0s" {
		t.Errorf("first failure: %v", r)
	}
	if p, _ := r["peer"].(map[string]any); p["id"] != "n2" || p["address"] != "10.0.0.2:8300" || p["suffrage"] != "Voter" {
		t.Errorf("peer rendered as %v", r["peer"])
	}
	c.add(400 * time.Millisecond)
	hl.Error("failed to heartbeat to", "peer", n2.Address, "backoff time", 400*time.Millisecond, "error", refused)
	r = one(t, out, "DEBUG", "failed to heartbeat to")
	if r["backoff_time"] != "400ms" || r["unreachable_for"] != "400ms" {
		t.Errorf("heartbeat failure: %v", r)
	}
	hl.Error("failed to appendEntries to", "peer", n2, "error", errors.New("EOF"))
	one(t, out, "DEBUG", "failed to appendEntries to")

	// Still down past the grace: an error worth seeing.
	for range 6 {
		c.add(liblog.Grace / 5)
		hl.Error("failed to heartbeat to", "peer", n2.Address, "error", refused)
		out.take(t)
	}
	hl.Error("failed to appendEntries to", "peer", n2, "error", refused)
	r = one(t, out, "ERROR", "failed to appendEntries to")
	if d, err := time.ParseDuration(fmt.Sprint(r["unreachable_for"])); err != nil || d < liblog.Grace {
		t.Errorf("unreachable_for = %v, want at least %s", r["unreachable_for"], liblog.Grace)
	}

	// It came back; a later restart is a new outage.
	c.add(time.Minute)
	hl.Error("failed to heartbeat to", "peer", n2.Address, "error", refused)
	one(t, out, "INFO", "failed to heartbeat to")

	// Another peer's outage is its own.
	n3 := raft.Server{ID: "n3", Address: "10.0.0.3:8300"}
	hl.Error("failed to make requestVote RPC", "target", n3, "error", errors.New("read: connection reset by peer"), "term", 7)
	one(t, out, "INFO", "failed to make requestVote RPC")

	// Not a process that is gone: a timeout, a key mismatch.
	hl.Error("failed to appendEntries to", "peer", n3, "error", errors.New("read tcp 10.0.0.1:5000->10.0.0.3:8300: i/o timeout"))
	one(t, out, "ERROR", "failed to appendEntries to")
	// Not a failure to reach a peer.
	hl.Error("failed to take snapshot", "error", errors.New("disk full: EOF"))
	one(t, out, "ERROR", "failed to take snapshot")
	hl.Error("failed to send snapshot to", "peer", n3, "error", refused)
	one(t, out, "ERROR", "failed to send snapshot to")
}

// TestRaftLevelsAndKeys: the warnings of a normal start and catch-up are
// INFO, a stopping transport's error DEBUG, replication mechanics DEBUG;
// keys read as svcd's own (err, no spaces, no clash with slog's time);
// With and Named keep their attributes.
func TestRaftLevelsAndKeys(t *testing.T) {
	b, out := newBridge(liblog.Options{})
	hl := b.Raft()

	hl.Warn("heartbeat timeout reached, starting election", "last-leader-addr", "", "last-leader-id", "")
	one(t, out, "INFO", "heartbeat timeout reached, starting election")
	hl.Warn("heartbeat timeout reached, starting election", "last-leader-addr", "10.0.0.2:8300", "last-leader-id", "n2")
	one(t, out, "WARN", "heartbeat timeout reached, starting election")
	hl.Warn("failed to get previous log", "previous-index", 9, "last-index", 0, "error", errors.New("log not found"))
	one(t, out, "INFO", "failed to get previous log")
	hl.Warn("previous log term mis-match", "ours", 3, "remote", 4)
	one(t, out, "WARN", "previous log term mis-match")
	hl.Error("failed to decode incoming command", "error", raft.ErrTransportShutdown)
	one(t, out, "DEBUG", "failed to decode incoming command")
	hl.Info("pipelining replication", "peer", raft.Server{ID: "n2"})
	one(t, out, "DEBUG", "pipelining replication")
	hl.Info("election won", "term", 3, "tally", 2)
	one(t, out, "INFO", "election won")

	hl.Warn("failed to contact", "server-id", raft.ServerID("n2"), "time", 700*time.Millisecond)
	r := one(t, out, "INFO", "failed to contact")
	if r["raft_time"] != "700ms" || r["time"] == "700ms" {
		t.Errorf("raft's time argument: %v", r)
	}

	snap := hl.Named("snapshot").With("path", "/data/raft/snapshots/1-2-3")
	snap.Error("failed to finalize snapshot", "error", errors.New("rename: no space left on device"))
	r = one(t, out, "ERROR", "failed to finalize snapshot")
	if r["module"] != "raft.snapshot" || r["path"] != "/data/raft/snapshots/1-2-3" || r["err"] != "rename: no space left on device" {
		t.Errorf("named logger record: %v", r)
	}
	if snap.Name() != "raft.snapshot" || !hl.IsDebug() || hl.IsTrace() {
		t.Errorf("name %q, debug %v, trace %v", snap.Name(), hl.IsDebug(), hl.IsTrace())
	}

	// A leader superseded: by its own leadership transfer (INFO), else
	// by an election others explain (WARN; raft says ERROR).
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	tb, tout := newBridge(liblog.Options{Now: c.Now})
	n2 := raft.Server{ID: "n2", Address: "10.0.0.2:8300"}
	tb.Raft().Error("peer has newer term, stopping replication", "peer", n2)
	one(t, tout, "WARN", "peer has newer term, stopping replication")
	tb.HandOver()
	c.add(time.Second)
	tb.Raft().Error("peer has newer term, stopping replication", "peer", n2)
	one(t, tout, "INFO", "peer has newer term, stopping replication")
	c.add(time.Minute)
	tb.Raft().Error("peer has newer term, stopping replication", "peer", n2)
	one(t, tout, "WARN", "peer has newer term, stopping replication")

	// A single node's raft has nothing to say at INFO.
	single, sout := newBridge(liblog.Options{SingleNode: true})
	single.Raft().Info("election won", "term", 2, "tally", 1)
	one(t, sout, "DEBUG", "election won")
}

// TestMemberlistLines: memberlist's "[LEVEL] memberlist: ..." lines
// become records at that level; a failed exchange with a peer whose
// process is gone follows the outage rule. Driven through a real
// memberlist that joins an address nobody listens on.
func TestMemberlistLines(t *testing.T) {
	b, out := newBridge(liblog.Options{})
	std := b.Memberlist()

	std.Printf("[ERR] memberlist: Push/Pull with n2 failed: dial tcp 10.0.0.2:7946: connect: connection refused")
	r := one(t, out, "INFO", "Push/Pull with n2 failed: dial tcp 10.0.0.2:7946: connect: connection refused")
	if r["module"] != "memberlist" {
		t.Errorf("module = %v", r["module"])
	}
	std.Printf("[ERR] memberlist: Push/Pull with n2 failed: EOF")
	one(t, out, "DEBUG", "Push/Pull with n2 failed: EOF")
	std.Printf("[ERR] memberlist: Failed fallback TCP ping: timeout 1s: read tcp 10.0.0.1:1->10.0.0.2:7946: i/o timeout")
	one(t, out, "ERROR", "Failed fallback TCP ping: timeout 1s: read tcp 10.0.0.1:1->10.0.0.2:7946: i/o timeout")
	std.Printf("[ERR] memberlist: Failed to decode ping: bad length from=10.0.0.2:7946")
	one(t, out, "ERROR", "Failed to decode ping: bad length from=10.0.0.2:7946")
	std.Printf("[WARN] memberlist: Refuting a suspect message (from: n3)")
	one(t, out, "WARN", "Refuting a suspect message (from: n3)")
	std.Printf("[DEBUG] memberlist: Stream connection from=10.0.0.2:50000")
	one(t, out, "DEBUG", "Stream connection from=10.0.0.2:50000")
	std.Printf("a line without a tag")
	one(t, out, "INFO", "a line without a tag")

	// The real library: a member whose peer stops. Its periodic
	// push/pull and probes fail while the peer is gone: not an error
	// within the grace.
	cfg := func(name string, logger *log.Logger) *memberlist.Config {
		c := memberlist.DefaultLocalConfig()
		c.Name, c.BindAddr, c.BindPort, c.AdvertisePort = name, "127.0.0.1", 0, 0
		c.PushPullInterval, c.ProbeInterval = 50*time.Millisecond, 100*time.Millisecond
		c.Logger = logger
		return c
	}
	m1, err := memberlist.Create(cfg("t1", std))
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Shutdown()
	m2, err := memberlist.Create(cfg("t2", log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Join([]string{m1.LocalNode().Address()}); err != nil {
		t.Fatal(err)
	}
	m2.Shutdown()
	out.take(t)
	var pushPull []map[string]any
	for deadline := time.Now().Add(5 * time.Second); len(pushPull) < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		for _, r := range out.take(t) {
			if r["level"] == "ERROR" {
				t.Errorf("an error while the peer is down: %v", r)
			}
			if msg, _ := r["msg"].(string); strings.HasPrefix(msg, "Push/Pull with t2 failed") {
				pushPull = append(pushPull, r)
			}
		}
	}
	if len(pushPull) < 2 || pushPull[0]["level"] != "INFO" || pushPull[1]["level"] != "DEBUG" || pushPull[0]["module"] != "memberlist" {
		t.Errorf("memberlist's failed push/pulls with the stopped peer: %v", pushPull)
	}
}
