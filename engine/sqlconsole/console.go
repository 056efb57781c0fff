// Package sqlconsole is the engine's SQL console module (SPEC.md "SQL
// runner (admin)", CONTRACT.md's /admin/sql paths): an admin runs one SQL
// statement against this node's replica, read only, or against a
// disposable copy of the database of their own (the sandbox); saved
// queries are kept through the log, owner-scoped.
//
// What may run is decided by SQLite, not by reading the text: every run
// opens a connection of its own with an authorizer (authorizer.go) and
// prepares the statement there. In readonly mode a statement that SQLite
// reports as not read only (sqlite3_stmt_readonly), or that asks the
// authorizer for any write, schema change, ATTACH or PRAGMA assignment, is
// refused with SVC_READONLY before it runs; the connection is opened
// read only (mode=ro, query_only) as a second wall. Internal tables
// (_svc_*) are refused (SVC_FORBIDDEN) and secret columns (password hashes,
// encrypted fields) read as NULL, in every mode.
//
// The time budget is enforced with sqlite3_interrupt (the driver calls it
// when the run's context ends), rows are capped at MaxRows with
// truncated set. Every failure of the statement itself is a Result with
// OK false and a code; only failures of the console (a database it cannot
// open) are errors.
package sqlconsole

import (
	"path/filepath"
	"sync"
	"time"

	"svcd/engine"
)

// Limits of SPEC.md.
const (
	// MaxRows is the most rows a run returns; more set Truncated.
	MaxRows = 1000
	// MinBudgetMs, MaxBudgetMs and DefaultBudgetMs bound a run's time.
	MinBudgetMs     = 100
	MaxBudgetMs     = 30000
	DefaultBudgetMs = 5000
	// DefaultSandboxIdle is how long an unused sandbox lives.
	DefaultSandboxIdle = time.Hour
)

// Modes of a run.
const (
	ModeReadonly = "readonly"
	ModeSandbox  = "sandbox"
)

// Options configure the module.
type Options struct {
	// NodeID names this node in sandbox answers (nil: "").
	NodeID func() string
	// SandboxDir holds the sandboxes ("": a folder sql-sandbox beside the
	// database file). Its content is removed at start: sandboxes do not
	// outlive the process that built them.
	SandboxDir string
	// SandboxIdle is how long an unused sandbox is kept (0: one hour).
	SandboxIdle time.Duration
}

// Console runs admins' SQL and keeps their saved queries.
type Console struct {
	core    *engine.Engine
	nodeID  func() string
	dir     string
	idle    time.Duration
	mu      sync.Mutex
	sandbox map[string]*sandbox // by admin id
}

// New wires the module to core: its table and commands. Call it before
// core.Seal.
func New(core *engine.Engine, opts Options) *Console {
	c := &Console{core: core, nodeID: opts.NodeID, dir: opts.SandboxDir, idle: opts.SandboxIdle, sandbox: map[string]*sandbox{}}
	if c.nodeID == nil {
		c.nodeID = func() string { return "" }
	}
	if c.dir == "" {
		c.dir = filepath.Join(filepath.Dir(core.Store().Path()), "sql-sandbox")
	}
	if c.idle <= 0 {
		c.idle = DefaultSandboxIdle
	}
	c.clearSandboxDir()
	c.registerTables()
	c.registerCommands()
	return c
}

// Errors of the module.
var (
	errQueryNotFound = engine.Errorf(engine.KindNotFound, "The saved query wasn't found")
	errNotOwner      = engine.Errorf(engine.KindForbidden, "Only the admin who saved the query may change or delete it")
	errNotAdmin      = engine.Errorf(engine.KindForbidden, "The SQL console is for admins")
	errNoAccount     = engine.Errorf(engine.KindForbidden, "The SQL console needs an admin account (sandboxes and saved queries belong to one)")
)
