package liblog

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Which library errors are expected, and for how long.
//
// A peer that starts, restarts or joins refuses connections for a moment:
// a joining node is added to the configuration before it listens (it
// starts Raft once the join is answered), and a restarted one is down
// while it stops and starts again. raft logs every failed attempt to reach
// it at ERROR (heartbeats retry every few hundred milliseconds), memberlist
// too. None of that needs an operator: the retries reach the peer once it
// is up. A peer that stays unreachable does.
//
// The rule therefore looks at what failed and for how long, not at when
// this node started: the leader that logs the refusals has usually been
// running for hours when a follower restarts, so a grace window after
// this node's own start would miss the common case. A record is demoted
// when all of these hold:
//
//   - it is one of the library's "could not reach a peer" messages
//     (contactMessages, memberlistContact), and nothing else: a failed
//     snapshot, a log that cannot be written or a rejected vote keep their
//     level;
//   - its error is a connection that was refused, reset or closed (the
//     sign of a process that is not there or is going away); a timeout, a
//     TLS or key mismatch stays an error, since a restart does not explain
//     it;
//   - the peer has been unreachable for less than Grace: a run of failures
//     to one peer (an outage) starts at the first failure that comes more
//     than quietGap after the previous one.
//
// The first failure of an outage is logged at INFO (one line says the peer
// went away), the others at DEBUG; past Grace they are logged at their own
// level again, with how long the peer has been unreachable.

// Grace is how long a peer may be unreachable before failures to reach
// it are logged at the library's level again. A normal restart or join
// takes a few seconds; a snapshot restore of a large database may take
// longer, and then the errors are worth seeing.
const Grace = 30 * time.Second

// quietGap ends an outage: a failure that follows the previous failure to
// the same peer by more than this begins a new one. It exceeds raft's
// longest retry backoff (about 10 s), so a peer that stays down keeps one
// outage.
const quietGap = 15 * time.Second

// maxPeers bounds the outages remembered; ended ones are dropped first.
const maxPeers = 256

// contactMessages are raft's messages for a failed attempt to reach a
// peer (hashicorp/raft v1.7: replication.go, raft.go, net_transport.go).
// Every one but "failed to contact" carries the error.
var contactMessages = map[string]bool{
	"failed to appendEntries to":              true,
	"failed to heartbeat to":                  true,
	"failed to make requestVote RPC":          true,
	"failed to start pipeline replication to": true,
	"failed to pipeline appendEntries":        true,
	"failed to decode incoming command":       true, // the peer went away mid-request
	"failed to contact":                       true, // the leader's lease check: no error, a duration
}

// memberlistContact are the beginnings of memberlist's messages for a
// failed exchange with a peer (memberlist v0.5: state.go, net.go,
// memberlist.go). peerFollows: the peer's name or address is the next
// word.
var memberlistContact = []struct {
	prefix      string
	peerFollows bool
}{
	{"Push/Pull with ", true},
	{"Failed to send gossip to ", true},
	{"Failed to join ", true},
	{"Failed fallback TCP ping: ", false},
	{"Failed to send UDP ping: ", false},
	{"Failed to send UDP compound ping and suspect message to ", true},
	{"Failed to send indirect UDP ping: ", false},
	{"Failed to send ack: ", false},
	{"Failed to push local state: ", false},
	{"Failed to read remote state: ", false},
	{"failed to receive: ", false},
}

// connectionGone are the error texts of a peer that is not there or is
// going away. EOF also matches "unexpected EOF".
var connectionGone = []string{
	"connection refused",
	"connection reset by peer",
	"broken pipe",
	"EOF",
	"use of closed network connection",
	"append pipeline closed", // raft.ErrPipelineShutdown: its connection broke
}

// raftLevel is the level of a raft record that is not a failure to reach
// a peer: raft's own, but for
//
//   - the warnings a normal start, join or restart always gives, which
//     are INFO: "heartbeat timeout reached, starting election" without a
//     last leader (the first election after a start, not a leader lost);
//     "failed to get previous log" (the follower's side) and
//     "appendEntries rejected, sending older logs" (the leader's): a
//     follower behind the leader, as a joining or restarted one is, being
//     caught up;
//   - an error whose cause is "transport shutdown": this node is stopping
//     and its transport closed under a request (DEBUG);
//   - raft's INFO lines about its replication's own mechanics (raftChatter),
//     which are DEBUG; elections won, membership changes and snapshots
//     stay INFO.
//
// With quietInfo (a single node: no peer to elect or replicate to) every
// INFO line of raft is DEBUG.
func raftLevel(msg string, level slog.Level, args []any, quietInfo bool) slog.Level {
	switch {
	case msg == "heartbeat timeout reached, starting election" && arg(args, "last-leader-id") == "",
		msg == "failed to get previous log", msg == "appendEntries rejected, sending older logs":
		level = min(level, slog.LevelInfo)
	case arg(args, "error") == raft.ErrTransportShutdown.Error():
		return min(level, slog.LevelDebug)
	}
	if level == slog.LevelInfo && (quietInfo || raftChatter[msg]) {
		level = slog.LevelDebug
	}
	return level
}

// raftChatter are raft's INFO lines that tell how it replicates, not
// what happened to the cluster: the node's log says the latter itself
// ("checked the Raft log", "leadership acquired", "joined the cluster").
var raftChatter = map[string]bool{
	"initial configuration":                  true,
	"entering follower state":                true,
	"entering candidate state":               true,
	"pre-vote successful, starting election": true,
	"pipelining replication":                 true,
	"aborting pipeline replication":          true,
}

// arg is the text of the argument key of hclog's alternating keys and
// values ("" when absent).
func arg(args []any, key string) string {
	for i := 0; i+1 < len(args); i += 2 {
		if k, _ := args[i].(string); k == key {
			return fmt.Sprint(args[i+1])
		}
	}
	return ""
}

// isConnectionGone reports whether an error's text says the peer's
// process is not there or closed the connection.
func isConnectionGone(err string) bool {
	for _, s := range connectionGone {
		if strings.Contains(err, s) {
			return true
		}
	}
	return false
}

// memberlistPeer reports whether a memberlist message (without its
// "[LEVEL] memberlist: " prefix) is a failed exchange with a peer, and
// names the peer when the message does.
func memberlistPeer(msg string) (peer string, ok bool) {
	for _, c := range memberlistContact {
		rest, found := strings.CutPrefix(msg, c.prefix)
		if !found {
			continue
		}
		if c.peerFollows {
			if f := strings.Fields(rest); len(f) > 0 {
				return "memberlist " + strings.TrimSuffix(f[0], ":"), true
			}
		}
		return "memberlist", true
	}
	return "", false
}

// outages remembers, per peer, when the current run of failures to reach
// it began. One is shared by every logger of a node.
type outages struct {
	now   func() time.Time
	mu    sync.Mutex
	peers map[string]*outage
}

type outage struct{ start, last time.Time }

func newOutages(now func() time.Time) *outages {
	if now == nil {
		now = time.Now
	}
	return &outages{now: now, peers: map[string]*outage{}}
}

// failed records a failure to reach peer: it returns how long the peer
// has been unreachable and whether this failure began the outage.
func (o *outages) failed(peer string) (down time.Duration, first bool) {
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.peers[peer]
	if p == nil || now.Sub(p.last) > quietGap {
		if p == nil && len(o.peers) >= maxPeers {
			o.forgetEnded(now)
		}
		p = &outage{start: now}
		o.peers[peer] = p
		first = true
	}
	p.last = now
	return now.Sub(p.start), first
}

// forgetEnded drops the outages that have ended, or every one when none
// has (the map stays bounded either way).
func (o *outages) forgetEnded(now time.Time) {
	for k, p := range o.peers {
		if now.Sub(p.last) > quietGap {
			delete(o.peers, k)
		}
	}
	if len(o.peers) >= maxPeers {
		clear(o.peers)
	}
}

// demote gives the level a failure to reach peer is logged at (level is
// the library's), and how long the peer has been unreachable.
func (o *outages) demote(level slog.Level, peer string) (slog.Level, time.Duration) {
	down, first := o.failed(peer)
	switch {
	case down >= Grace:
		return level, down
	case first:
		return min(level, slog.LevelInfo), down
	default:
		return min(level, slog.LevelDebug), down
	}
}
