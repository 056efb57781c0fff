package queue

import (
	"strconv"
	"strings"

	"svcd/engine"
)

// schemaVersion is the internal schema version of the module's tables
// (engine/DESIGN.md lists the versions). Never change a released version.
const schemaVersion = 8

// registerTables: queue jobs, workers, scheduled jobs and their runs.
// Times the module keeps to the millisecond (a retry's run_after, a
// claim's end) are unix milliseconds (_ms); the others unix seconds.
func (q *Queue) registerTables() {
	q.core.Migration(engine.Migration{Version: schemaVersion, Owner: "queue", Stmts: []string{
		// One row per queue job. attempt counts the runs started (a claim
		// starts one); retries is how many runs may follow a failed one.
		// unique_key deduplicates among the queue's unfinished jobs (the
		// partial index). result is the JSON the worker returned.
		`CREATE TABLE _svc_queue_jobs (id TEXT PRIMARY KEY, queue TEXT NOT NULL, state TEXT NOT NULL,
			payload TEXT NOT NULL, attempt INTEGER NOT NULL, retries INTEGER NOT NULL, backoff TEXT NOT NULL,
			retry_delay_ms INTEGER NOT NULL, unique_key TEXT, run_after_ms INTEGER NOT NULL,
			claimed_by TEXT, claim_until_ms INTEGER, last_error TEXT, result TEXT,
			created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL, finished_ms INTEGER)`,
		`CREATE INDEX _svc_queue_jobs_due ON _svc_queue_jobs (queue, state, run_after_ms)`,
		`CREATE INDEX _svc_queue_jobs_claims ON _svc_queue_jobs (state, claim_until_ms)`,
		`CREATE INDEX _svc_queue_jobs_finished ON _svc_queue_jobs (state, finished_ms)`,
		`CREATE INDEX _svc_queue_jobs_list ON _svc_queue_jobs (queue, created_ms)`,
		`CREATE UNIQUE INDEX _svc_queue_jobs_unique ON _svc_queue_jobs (queue, unique_key)
			WHERE unique_key IS NOT NULL AND state IN ('queued', 'running')`,
		// One worker per queue.
		`CREATE TABLE _svc_queue_workers (id TEXT PRIMARY KEY, queue TEXT NOT NULL UNIQUE, code TEXT NOT NULL,
			concurrency INTEGER NOT NULL, enabled INTEGER NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		// Scheduled jobs: cron (5-field UTC) or one-off (run_at). version
		// moves with every save, so a firing computed from an older row is
		// refused; last_scheduled_at is the newest scheduled time fired:
		// a firing at or before it is refused.
		`CREATE TABLE _svc_jobs (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, cron TEXT, run_at INTEGER,
			mode TEXT NOT NULL, code TEXT NOT NULL, enabled INTEGER NOT NULL, catch_up INTEGER NOT NULL,
			last_run_at INTEGER, next_run_at INTEGER, last_scheduled_at INTEGER NOT NULL,
			version INTEGER NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		// The runs of scheduled jobs, one per (job, key): key is the
		// scheduled time in unix seconds, or "manual-<uuid>" for a run
		// asked for by an admin. seq orders them (the log index).
		`CREATE TABLE _svc_job_runs (job_id TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,
			scheduled_at INTEGER NOT NULL, manual INTEGER NOT NULL, state TEXT NOT NULL, queue_job_id TEXT,
			node TEXT, claim_until_ms INTEGER, error TEXT, result TEXT,
			fired_ms INTEGER NOT NULL, started_ms INTEGER, finished_ms INTEGER, PRIMARY KEY (job_id, key))`,
		`CREATE INDEX _svc_job_runs_seq ON _svc_job_runs (job_id, seq)`,
		`CREATE INDEX _svc_job_runs_state ON _svc_job_runs (state, claim_until_ms)`,
	}})
}

// Settings of the module. execution.timeout_ms and
// queues.visibility_timeout_sec are the core's (SPEC.md's table).
const (
	settingTimeout    = "execution.timeout_ms"
	settingVisibility = "queues.visibility_timeout_sec"
	// settingRetention is how long a succeeded queue job is kept.
	settingRetention = "queues.succeeded_retention_sec"
	// settingSeconds lets a job's cron have six fields, the first being
	// seconds (tests and demos: schedules every few seconds).
	settingSeconds = "jobs.cron_seconds"
)

func (q *Queue) registerSettings() {
	q.core.DefineSettings(engine.Defaults(
		settingRetention, "604800",
		settingSeconds, "0",
	)...)
}

// intSetting reads a non-negative integer setting, def when malformed.
func (q *Queue) intSetting(key string, def int64) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(q.core.Setting(key)), 10, 64)
	if err != nil || n < 0 {
		return def
	}
	return n
}

// visibilityMs is queues.visibility_timeout_sec in milliseconds (at least
// one second).
func (q *Queue) visibilityMs() int64 {
	return max(q.intSetting(settingVisibility, 300), 1) * 1000
}

// retentionMs is queues.succeeded_retention_sec in milliseconds.
func (q *Queue) retentionMs() int64 { return q.intSetting(settingRetention, 604800) * 1000 }

// TimeoutMs is execution.timeout_ms: the budget of one run (0: none).
func (q *Queue) TimeoutMs() int64 { return q.intSetting(settingTimeout, 5000) }
