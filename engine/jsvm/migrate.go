package jsvm

import "svcd/engine"

// schemaVersion is the internal schema version of the module's tables
// (engine/DESIGN.md lists the versions). Never change a released version.
const schemaVersion = 12

// registerTables: the hooks and the custom routes admins author.
func (m *Module) registerTables() {
	m.core.Migration(engine.Migration{Version: schemaVersion, Owner: "jsvm", Stmts: []string{
		// One row per hook: the code run around writes of collection
		// (a name, or "*" for every collection) for one of the six
		// events, in ord order.
		`CREATE TABLE _svc_hooks (id TEXT PRIMARY KEY, collection TEXT NOT NULL, event TEXT NOT NULL,
			code TEXT NOT NULL, enabled INTEGER NOT NULL, ord INTEGER NOT NULL,
			created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		// One row per custom route: method ("*": any) and path as the
		// admin wrote them; pattern is the path with every parameter
		// written ":", so two routes that would answer the same requests
		// cannot both be stored.
		`CREATE TABLE _svc_routes (id TEXT PRIMARY KEY, method TEXT NOT NULL, path TEXT NOT NULL,
			pattern TEXT NOT NULL, code TEXT NOT NULL, enabled INTEGER NOT NULL,
			created INTEGER NOT NULL, updated INTEGER NOT NULL, UNIQUE (method, pattern))`,
	}})
}
