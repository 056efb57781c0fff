package cluster

import (
	"context"
	"time"
)

// applyWaitKey carries a longer wait for one Apply.
type applyWaitKey struct{}

// WithApplyWait lets Apply under ctx wait up to d (instead of
// Config.LeaderWait) for a forwarded command's answer and for this
// replica to apply it: for a command whose apply takes long on every node
// (a restore copies and checks a whole database), so that a follower does
// not give up on a write that is still being applied.
func WithApplyWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, applyWaitKey{}, d)
}

// applyWait is the wait of an Apply under ctx.
func (n *Node) applyWait(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(applyWaitKey{}).(time.Duration); ok && d > n.cfg.LeaderWait {
		return d
	}
	return n.cfg.LeaderWait
}
