package engine

// The core's internal tables (migrate.go). Versions 1 to 5 are the
// baseline every release since the first replays: never change them.
func (e *Engine) registerCoreMigrations() {
	e.Migration(Migration{Version: 1, Owner: "core", Stmts: []string{
		`CREATE TABLE _svc_collections (
			id TEXT PRIMARY KEY,
			name TEXT NOT NULL UNIQUE COLLATE NOCASE,
			type TEXT NOT NULL,
			version INTEGER NOT NULL,
			data TEXT NOT NULL,
			created INTEGER NOT NULL,
			updated INTEGER NOT NULL)`,
		`CREATE TABLE _svc_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
	}})
	e.Migration(Migration{Version: 5, Owner: "core", Stmts: []string{
		// Keys drawn once for the whole cluster and replicated: the ETag
		// key (etag.go), installed from the migrate command.
		`CREATE TABLE _svc_keys (name TEXT PRIMARY KEY, key BLOB NOT NULL) WITHOUT ROWID`,
	}})
}
