// Package queue is the engine's module for background work (SPEC.md
// "Server-side code and queues"): queue jobs and the workers that run
// them, and scheduled jobs (cron and one-off) that run inline or through a
// queue.
//
// Every change of state is a command: an enqueue, a claim of due jobs, a
// completion (success, retry with backoff, or dead letter), the reaper's
// release of claims past the visibility timeout, the retry of a dead job,
// a job's firing for one scheduled time, a run's start and end. The
// leader's loops (scheduler/) decide when to propose them; the apply
// decides, from the database alone, what they do: a claim takes due jobs
// up to the queue's free concurrency counted from the running rows, a
// completion counts only for the attempt that holds the claim, and a
// firing is refused for a scheduled time at or before the last one fired.
// So a new leader resumes where the old one stopped, never claims a job
// whose claim stands, and never fires a scheduled time twice.
//
// Times are resolved before proposing (the command carries now, in
// milliseconds) and ids are made before proposing: the apply reads no
// clock and draws no random number. JavaScript never runs here: the
// module stores code, checks that it compiles (through the CodeChecker
// the composition root passes in), and hands it to the scheduler's loops.
package queue

import (
	"log/slog"

	"svcd/engine"
	"svcd/fsm"
)

// CodeChecker compiles code: a nil error, or one whose message names the
// line and column (engine/jsvm's CompileError). The composition root
// passes the JavaScript VM.
type CodeChecker interface {
	Check(code string) error
}

// Options are what the module needs besides the core.
type Options struct {
	// Code checks the code of workers and jobs at save (nil: not
	// checked).
	Code CodeChecker
	// Builtin names the queues whose jobs Go code of svcd runs
	// (builtin.go): no worker may be saved for them.
	Builtin []string
}

// Queue is the module: queue jobs, workers and scheduled jobs.
type Queue struct {
	core *engine.Engine
	code CodeChecker
	log  *slog.Logger
	// wake is signalled (without blocking) when committed commands may
	// have made queue jobs due: an enqueue, a retry, a requeue.
	wake chan struct{}
	// builtin are Options.Builtin.
	builtin map[string]bool
}

// New wires the module to core: its tables, settings, commands and
// results, and the observer that wakes the dispatcher.
func New(core *engine.Engine, opts Options) *Queue {
	q := &Queue{core: core, code: opts.Code, log: core.Logger(), wake: make(chan struct{}, 1), builtin: map[string]bool{}}
	for _, name := range opts.Builtin {
		q.builtin[name] = true
	}
	q.registerTables()
	q.registerSettings()
	q.registerCommands()
	q.registerPruner()
	q.registerRestoreCarrier()
	core.OnEvents(q.observe)
	return q
}

// evQueued is the event of a command that made a queue job due now or
// later (its Subject is the queue).
const evQueued = "queue.queued"

// observe wakes the dispatcher after commands that queued work.
func (q *Queue) observe(evs []fsm.Event) {
	for _, ev := range evs {
		if ev.Kind == evQueued || ev.Kind == fsm.KindRestore || ev.Kind == engine.EvMigrate {
			q.signal()
			return
		}
	}
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wake is signalled when queue jobs may have become due (the dispatcher
// waits on it besides its tick). It has one reader.
func (q *Queue) Wake() <-chan struct{} { return q.wake }

// migrated reports whether this replica has the module's tables (the
// leader's loops start before the migration that makes them commits).
func (q *Queue) migrated() bool { return q.core.InternalVersion() >= schemaVersion }

// Errors of the module.
var (
	errJobNotFound    = engine.Errorf(engine.KindNotFound, "The queue job wasn't found")
	errWorkerNotFound = engine.Errorf(engine.KindNotFound, "The worker wasn't found")
	errCronNotFound   = engine.Errorf(engine.KindNotFound, "The job wasn't found")
	errNotDead        = engine.Errorf(engine.KindConflict, "Only a dead job can be retried")
	errKeyTaken       = engine.Errorf(engine.KindConflict, "An unfinished job of the queue has the same unique key")
	errWorkerTaken    = engine.Errorf(engine.KindConflict, "A worker for this queue exists already (one worker per queue)")
	errNameTaken      = engine.Errorf(engine.KindConflict, "A job with this name exists already")
)
