package sqlconsole

import "svcd/engine"

// schemaVersion is the internal schema version of the module's table
// (engine/DESIGN.md lists the versions). Never change a released version.
const schemaVersion = 16

// registerTables: the saved queries.
func (c *Console) registerTables() {
	c.core.Migration(engine.Migration{Version: schemaVersion, Owner: "sqlconsole", Stmts: []string{
		// params is the JSON array of the query's default parameters.
		`CREATE TABLE _svc_sql_queries (id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, name TEXT NOT NULL,
			sql TEXT NOT NULL, mode TEXT NOT NULL, params TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		`CREATE INDEX _svc_sql_queries_owner ON _svc_sql_queries (owner_id, name)`,
	}})
}
