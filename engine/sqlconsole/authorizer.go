package sqlconsole

import (
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// policy is the authorizer of one run's connection. SQLite asks it about
// every action a statement will take while it prepares the statement, so
// what it refuses never runs. The first refusal is kept to answer with its
// code (SQLite itself only says "not authorized").
type policy struct {
	mode string // ModeReadonly, ModeSandbox or modeWrite
	// secrets are the columns that read as NULL: lower-cased table, then
	// lower-cased column.
	secrets map[string]map[string]bool
	refusal *refusal
}

// refusal is why the authorizer said no.
type refusal struct {
	code, msg string
}

// sqliteRecursive is SQLITE_RECURSIVE (a recursive CTE), which the driver
// does not name.
const sqliteRecursive = 33

// modeWrite is a write through the log (Write): data changes only,
// deterministic functions only.
const modeWrite = "write"

// readPragmas only read (given no value, or, for argPragmas, a table or
// index name as their argument).
var readPragmas = set("table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
	"foreign_key_list", "foreign_key_check", "database_list", "collation_list", "function_list", "module_list",
	"pragma_list", "compile_options", "user_version", "schema_version", "application_id", "page_count",
	"page_size", "freelist_count", "encoding", "integrity_check", "quick_check", "journal_mode", "data_version",
	"auto_vacuum", "foreign_keys")

// argPragmas take an object's name, not a new setting, as their value.
var argPragmas = set("table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
	"foreign_key_list", "foreign_key_check", "integrity_check", "quick_check")

// sandboxPragmas may be set in a sandbox: they change only the copy or the
// run's own connection.
var sandboxPragmas = set("user_version", "application_id", "foreign_keys", "defer_foreign_keys", "recursive_triggers")

// volatileFuncs answer differently on different replicas or at different
// times: a write through the log may not call them. The date functions are
// refused whatever their arguments (a time is passed as a parameter).
var volatileFuncs = set("random", "randomblob", "date", "time", "datetime", "julianday", "unixepoch", "strftime",
	"timediff", "current_date", "current_time", "current_timestamp", "changes", "total_changes",
	"last_insert_rowid", "sqlite_version", "sqlite_source_id", "sqlite_offset", "load_extension")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// internal reports whether name is one of the service's own tables.
func internal(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "_svc_") || n == "_svc_meta"
}

func (p *policy) refuse(code, msg string) int {
	if p.refusal == nil {
		p.refusal = &refusal{code: code, msg: msg}
	}
	return sqlite3.SQLITE_DENY
}

// readonlyRefusal refuses a statement that would change something.
func (p *policy) readonlyRefusal(what string) int {
	return p.refuse(CodeReadonly, "The statement "+what+"; readonly mode runs statements that only read")
}

// authorize is the callback SQLite calls: action, then up to three
// arguments (see sqlite3_set_authorizer).
func (p *policy) authorize(op int, a1, a2, _ string) int {
	switch op {
	case sqlite3.SQLITE_SELECT, sqliteRecursive:
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_READ:
		if internal(a1) {
			return p.refuse(CodeForbidden, "The service's internal table "+a1+" is not readable from the SQL console")
		}
		if p.secrets[strings.ToLower(a1)][strings.ToLower(a2)] {
			return sqlite3.SQLITE_IGNORE // reads as NULL: no value, no oracle in WHERE
		}
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_FUNCTION:
		f := strings.ToLower(a2)
		if f == "load_extension" {
			return p.refuse(CodeForbidden, "load_extension() is not available")
		}
		if p.mode == modeWrite && volatileFuncs[f] {
			return p.refuse(CodeNotDeterministic, "The function "+f+"() gives different answers on different nodes; a write through the log cannot call it (pass the value as a parameter)")
		}
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_PRAGMA:
		return p.pragma(strings.ToLower(a1), a2)
	case sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT:
		if p.mode == modeWrite {
			return p.refuse(CodeForbidden, "A write through the log is one statement in the log's own transaction")
		}
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH:
		if p.mode == ModeReadonly {
			return p.readonlyRefusal("attaches a database")
		}
		return p.refuse(CodeForbidden, "ATTACH and DETACH are not available in the SQL console")
	case sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE:
		switch {
		case p.mode == ModeReadonly:
			return p.readonlyRefusal("writes to " + a1)
		case internal(a1):
			return p.refuse(CodeForbidden, "The service's internal table "+a1+" cannot be changed from the SQL console")
		case p.mode == modeWrite && strings.HasPrefix(strings.ToLower(a1), "sqlite_"):
			return p.refuse(CodeForbidden, "A write through the log changes records, not the schema")
		}
		return sqlite3.SQLITE_OK
	}
	// Everything else changes the schema or the database file: CREATE,
	// DROP, ALTER, REINDEX, ANALYZE, virtual tables.
	switch {
	case p.mode == ModeReadonly:
		return p.readonlyRefusal("changes the schema")
	case p.mode == modeWrite:
		return p.refuse(CodeForbidden, "A write through the log changes records, not the schema (use the collections API)")
	case internal(a1) || internal(a2):
		return p.refuse(CodeForbidden, "The service's internal tables cannot be changed from the SQL console")
	}
	return sqlite3.SQLITE_OK
}

// pragma decides PRAGMA name (= value).
func (p *policy) pragma(name, value string) int {
	reads := readPragmas[name] && (value == "" || argPragmas[name])
	switch {
	case reads && p.mode != modeWrite:
		return sqlite3.SQLITE_OK
	case p.mode == ModeReadonly:
		return p.readonlyRefusal("sets PRAGMA " + name)
	case p.mode == ModeSandbox && sandboxPragmas[name]:
		return sqlite3.SQLITE_OK
	}
	return p.refuse(CodeForbidden, "PRAGMA "+name+" is not available here")
}
