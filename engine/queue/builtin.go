package queue

import "context"

// Built-in queues are queues whose jobs Go code of svcd runs instead of a
// worker's JavaScript (engine/notify's push sends). The composition root
// names them in Options.Builtin and hands their handlers to the leader's
// dispatcher (scheduler.BuiltinQueue). Their jobs are queue jobs like any
// other: enqueued, claimed, completed, retried with backoff, dead-lettered
// and released by the reaper through the same commands, listed and retried
// by the same admin routes. Only the claim differs: it names the queue and
// its concurrency instead of a worker, and no worker may be saved for the
// queue.

// Builtin reports whether queue is a built-in queue.
func (q *Queue) Builtin(queue string) bool { return q.builtin[queue] }

// ClaimBuiltin claims up to max due jobs of built-in queue for node by,
// at most concurrency running at once as the database counts them. It
// proposes nothing when this replica sees no due job.
func (q *Queue) ClaimBuiltin(ctx context.Context, queue string, concurrency, max int, by string) ([]ClaimedJob, error) {
	if max <= 0 || concurrency <= 0 || !q.builtin[queue] || !q.migrated() {
		return nil, nil
	}
	now := q.core.Now().UnixMilli()
	due, err := q.hasDue(ctx, queue, now)
	if err != nil || !due {
		return nil, err
	}
	v, _, err := q.core.Propose(ctx, cmdClaim, claimCmd{Queue: queue, Concurrency: int64(concurrency), Max: int64(max),
		By: by, Now: now, Until: now + q.visibilityMs()})
	if err != nil {
		return nil, err
	}
	return v.(*claimResult).Jobs, nil
}
