package liblog

import (
	"context"
	"log/slog"
	"time"
)

// Bridge hands the libraries of one node loggers that write through that
// node's slog.Logger. Its loggers share one memory of unreachable peers
// (noise.go).
type Bridge struct {
	log       *slog.Logger
	outages   *outages
	quietInfo bool
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
	return &Bridge{log: log, outages: newOutages(opts.Now), quietInfo: opts.SingleNode}
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
