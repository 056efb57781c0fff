package webhooks

import (
	"strconv"
	"strings"

	"svcd/engine"
)

// schemaVersion is the internal schema version of the module's tables
// (engine/DESIGN.md lists the versions). Never change a released version.
const schemaVersion = 10

// registerTables: the webhooks, their patterns (for matching an event in
// SQL), and the outbox of deliveries.
func (m *Webhooks) registerTables() {
	m.core.Migration(engine.Migration{Version: schemaVersion, Owner: "webhooks", Stmts: []string{
		// events is the JSON array of patterns, custom_headers a JSON
		// object; secret is sealed when the node has an encryption key.
		// version counts saves (a PATCH applies only to the version it
		// read).
		`CREATE TABLE _svc_webhooks (id TEXT PRIMARY KEY, url TEXT NOT NULL, events TEXT NOT NULL,
			secret TEXT NOT NULL, custom_headers TEXT NOT NULL, enabled INTEGER NOT NULL,
			retry_max INTEGER NOT NULL, retry_backoff TEXT NOT NULL, retry_delay_ms INTEGER NOT NULL,
			timeout_ms INTEGER NOT NULL, version INTEGER NOT NULL, created INTEGER NOT NULL,
			updated INTEGER NOT NULL)`,
		`CREATE TABLE _svc_webhook_patterns (pattern TEXT NOT NULL, webhook_id TEXT NOT NULL,
			PRIMARY KEY (pattern, webhook_id)) WITHOUT ROWID`,
		// One row per delivery. idx and pos (the log index of the command
		// that queued it and its position in that command) make the id.
		// payload is the record snapshot (coll_id set) or the custom
		// event's data. next_ms is when the next attempt is due (0 once
		// final); claimer and lease_ms hold the leader's claim on an
		// attempt in flight. Times in seconds but next_ms and lease_ms.
		`CREATE TABLE _svc_webhook_deliveries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
			webhook_id TEXT NOT NULL, idx INTEGER NOT NULL, pos INTEGER NOT NULL, event TEXT NOT NULL,
			coll_id TEXT NOT NULL, at INTEGER NOT NULL, payload TEXT NOT NULL, status TEXT NOT NULL,
			attempt INTEGER NOT NULL, next_ms INTEGER NOT NULL, claimer TEXT NOT NULL, lease_ms INTEGER NOT NULL,
			response_status INTEGER NOT NULL, response_body TEXT NOT NULL, error TEXT NOT NULL,
			duration_ms INTEGER NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		`CREATE INDEX _svc_webhook_deliveries_due ON _svc_webhook_deliveries (next_ms)
			WHERE status IN ('pending', 'retrying')`,
		`CREATE INDEX _svc_webhook_deliveries_hook ON _svc_webhook_deliveries (webhook_id, seq)`,
	}})
}

// Settings of the module.
const (
	// settingConcurrency bounds the attempts in flight on the leader.
	settingConcurrency = "webhooks.concurrency"
	// settingRetention is how long finished deliveries are kept (days).
	settingRetention = "webhooks.retention_days"
)

const (
	defaultConcurrency = 10
	defaultRetention   = 7
)

func (m *Webhooks) registerSettings() {
	m.core.DefineSettings(engine.Defaults(
		settingConcurrency, strconv.Itoa(defaultConcurrency),
		settingRetention, strconv.Itoa(defaultRetention),
	)...)
}

// Concurrency is webhooks.concurrency: the most attempts the leader has
// in flight at once (1 to 1000).
func (m *Webhooks) Concurrency() int {
	n, err := strconv.Atoi(strings.TrimSpace(m.core.Setting(settingConcurrency)))
	if err != nil || n < 1 {
		return defaultConcurrency
	}
	return min(n, 1000)
}

// retentionSeconds is webhooks.retention_days in seconds (at least one
// hour: 0 would delete a delivery before anyone could read it).
func (m *Webhooks) retentionSeconds() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(m.core.Setting(settingRetention)), 10, 64)
	if err != nil || n < 0 {
		n = defaultRetention
	}
	return max(n*86400, 3600)
}
