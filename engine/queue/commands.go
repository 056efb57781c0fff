package queue

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused.
const (
	// cmdEnqueue adds a queue job (or finds the unfinished one with its
	// unique key).
	cmdEnqueue fsm.Type = 90
	// cmdClaim moves due jobs of a queue to running, up to the queue's
	// free concurrency.
	cmdClaim fsm.Type = 91
	// cmdComplete ends a run: succeeded, queued again with backoff, or
	// dead.
	cmdComplete fsm.Type = 92
	// cmdCompleteFromClaim is cmdComplete whose retry backoff counts from
	// the claim's end at most (retryBase). A new type, not a new rule for
	// 92: entries of 92 replay as they applied, and a node of an older
	// version stops at 165 instead of applying it differently.
	cmdCompleteFromClaim fsm.Type = 165
	// cmdReap releases claims past the visibility timeout, marks lost the
	// runs of scheduled jobs whose leader went away, and drops old
	// succeeded jobs.
	cmdReap fsm.Type = 93
	// cmdRetry puts a dead job back in its queue.
	cmdRetry fsm.Type = 94
	// cmdWorker creates, changes or deletes a worker.
	cmdWorker fsm.Type = 95
	// cmdJob creates, changes or deletes a scheduled job.
	cmdJob fsm.Type = 96
	// cmdFire fires a scheduled job for one scheduled time (or skips the
	// missed ones), or records an admin's run-now.
	cmdFire fsm.Type = 97
	// cmdStart starts a pending run (an inline run-now) on the leader.
	cmdStart fsm.Type = 98
	// cmdFinish records how an inline run ended.
	cmdFinish fsm.Type = 99
)

func (q *Queue) registerCommands() {
	engine.RegisterResult[Enqueued](q.core, "queue.enqueued")
	engine.RegisterResult[claimResult](q.core, "queue.claimed")
	engine.RegisterResult[Job](q.core, "queue.job")
	engine.RegisterResult[Worker](q.core, "queue.worker")
	engine.RegisterResult[CronJob](q.core, "queue.cronjob")
	engine.RegisterResult[Run](q.core, "queue.run")
	engine.RegisterResult[fireResult](q.core, "queue.fired")
	q.core.Command(cmdEnqueue, "queue.enqueue", q.applyEnqueue)
	q.core.Command(cmdClaim, "queue.claim", q.applyClaim)
	q.core.Command(cmdComplete, "queue.complete", func(tx *fsm.Tx, cmd fsm.Command) (any, error) { return q.applyComplete(tx, cmd, false) })
	q.core.Command(cmdCompleteFromClaim, "queue.complete_from_claim", func(tx *fsm.Tx, cmd fsm.Command) (any, error) { return q.applyComplete(tx, cmd, true) })
	q.core.Command(cmdReap, "queue.reap", q.applyReap)
	q.core.Command(cmdRetry, "queue.retry", q.applyRetry)
	q.core.Command(cmdWorker, "queue.worker", q.applyWorker)
	q.core.Command(cmdJob, "jobs.save", q.applyJob)
	q.core.Command(cmdFire, "jobs.fire", q.applyFire)
	q.core.Command(cmdStart, "jobs.start", q.applyStart)
	q.core.Command(cmdFinish, "jobs.finish", q.applyFinish)
}
