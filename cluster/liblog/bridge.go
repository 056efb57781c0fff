package liblog

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Bridge hands the libraries of one node loggers that write through that
// node's slog.Logger. Its loggers share one memory of unreachable peers
// (noise.go).
type Bridge struct {
	log       *slog.Logger
	outages   *outages
	quietInfo bool
	now       func() time.Time
	handover  atomic.Int64 // unix nanoseconds of the last HandOver
}

// Options tune a Bridge.
type Options struct {
	// SingleNode: the node has no peers, so raft's INFO lines (its
	// elections and configuration) are DEBUG.
	SingleNode bool
	// Now times outages (tests); nil is time.Now.
	Now func() time.Time
}

// New returns a bridge to log (its handler, level and attributes).
func New(log *slog.Logger, opts Options) *Bridge {
	b := &Bridge{log: log, outages: newOutages(opts.Now), quietInfo: opts.SingleNode, now: opts.Now}
	if b.now == nil {
		b.now = time.Now
	}
	return b
}

// handoverWindow is how long after HandOver a leader's step-down is the
// transfer's doing.
const handoverWindow = 10 * time.Second

// HandOver tells the bridge that this node, leading, is handing its
// leadership to another voter: raft then reports that a peer has a newer
// term and stops replicating to it, which is the transfer working (INFO),
// not a leader deposed (WARN; raft says ERROR).
func (b *Bridge) HandOver() {
	if b != nil {
		b.handover.Store(b.now().UnixNano())
	}
}

// deposedLevel is the level of raft's "peer has newer term, stopping
// replication".
func (b *Bridge) deposedLevel() slog.Level {
	if at := b.handover.Load(); at != 0 && b.now().Sub(time.Unix(0, at)) < handoverWindow {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// emit writes one library record: the failure to reach peer (when peer
// is not empty and the failure is one a restarting peer explains) is
// demoted by the outage rule first.
func (b *Bridge) emit(log *slog.Logger, level slog.Level, msg, peer string, attrs []slog.Attr) {
	if peer != "" && level >= slog.LevelWarn {
		var down time.Duration
		level, down = b.outages.demote(level, peer)
		attrs = append(attrs, slog.String("unreachable_for", down.Round(time.Millisecond).String()))
	}
	ctx := context.Background()
	if !log.Enabled(ctx, level) {
		return
	}
	log.LogAttrs(ctx, level, msg, attrs...)
}
