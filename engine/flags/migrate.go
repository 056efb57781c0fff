package flags

import "svcd/engine"

// schemaVersion is the internal schema version of the module's tables
// (engine/DESIGN.md lists the versions). Never change a released version.
const schemaVersion = 11

// registerTables: flags, segments, and who references whom.
func (m *Flags) registerTables() {
	m.core.Migration(engine.Migration{Version: schemaVersion, Owner: "flags", Stmts: []string{
		// def is the flag's definition as canonical JSON (key included);
		// variations the JSON array of its variation names, for the
		// prerequisite checks of other flags' writes; rev counts writes.
		`CREATE TABLE _svc_flags (key TEXT PRIMARY KEY, def TEXT NOT NULL, variations TEXT NOT NULL,
			rev INTEGER NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		`CREATE TABLE _svc_flag_segments (name TEXT PRIMARY KEY, def TEXT NOT NULL,
			rev INTEGER NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		// One row per reference: flag -> flag (a prerequisite, with the
		// variation it needs), flag -> segment, segment -> segment.
		`CREATE TABLE _svc_flag_refs (src_kind TEXT NOT NULL, src TEXT NOT NULL, dst_kind TEXT NOT NULL,
			dst TEXT NOT NULL, variation TEXT NOT NULL, PRIMARY KEY (src_kind, src, dst_kind, dst, variation)) WITHOUT ROWID`,
		`CREATE INDEX _svc_flag_refs_dst ON _svc_flag_refs (dst_kind, dst)`,
	}})
}
