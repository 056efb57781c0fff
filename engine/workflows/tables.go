package workflows

import "svcd/engine"

// schemaVersion is the internal schema version of the module's tables
// (engine/DESIGN.md lists the versions). Never change a released version.
const schemaVersion = 9

// registerTables: the definitions, the runs, the step memos, and the
// events delivered to waiting runs.
func (m *Workflows) registerTables() {
	m.core.Migration(engine.Migration{Version: schemaVersion, Owner: "workflows", Stmts: []string{
		`CREATE TABLE _svc_workflows (name TEXT PRIMARY KEY, code TEXT NOT NULL,
			created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		// One row per run. state: running, sleeping, waiting, completed,
		// failed. input and output are JSON; executions counts the
		// claims (the fence of the commands of one execution); wake_at
		// is when a sleeping run wakes, or when a waiting one stops
		// waiting (0: never); wait_* name the pending waitForEvent.
		`CREATE TABLE _svc_workflow_runs (id TEXT PRIMARY KEY, workflow TEXT NOT NULL, state TEXT NOT NULL,
			input TEXT NOT NULL, output TEXT, error TEXT, executions INTEGER NOT NULL DEFAULT 0,
			wake_at INTEGER NOT NULL DEFAULT 0, wait_step TEXT, wait_event TEXT, wait_key TEXT,
			created INTEGER NOT NULL, updated INTEGER NOT NULL, finished INTEGER)`,
		`CREATE INDEX _svc_workflow_runs_list ON _svc_workflow_runs (workflow, created)`,
		`CREATE INDEX _svc_workflow_runs_state ON _svc_workflow_runs (state, wake_at)`,
		`CREATE INDEX _svc_workflow_runs_wait ON _svc_workflow_runs (wait_event) WHERE wait_event IS NOT NULL`,
		// The memos: one row per step of a run, in the order they were
		// first recorded. kind: run, sleep, wait. state: completed,
		// retrying, failed (run); sleeping, completed (sleep); waiting,
		// completed (wait). result is JSON.
		`CREATE TABLE _svc_workflow_steps (run_id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
			state TEXT NOT NULL, result TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0,
			wake_at INTEGER NOT NULL DEFAULT 0, event TEXT, wait_key TEXT,
			created INTEGER NOT NULL, updated INTEGER NOT NULL, UNIQUE (run_id, name))`,
		// Events delivered to a waiting run, not yet matched: seq is the
		// log index of the emit.
		`CREATE TABLE _svc_workflow_deliveries (run_id TEXT NOT NULL, seq INTEGER NOT NULL, step TEXT NOT NULL,
			event TEXT NOT NULL, event_key TEXT, payload TEXT NOT NULL, created INTEGER NOT NULL,
			PRIMARY KEY (run_id, seq))`,
	}})
}
