package workflows

import (
	"context"
	"log/slog"
	"regexp"

	"github.com/dop251/goja"

	"svcd/engine"
)

// Runner runs admin-authored JavaScript: engine/jsvm with its helpers,
// wired by the composition root.
type Runner interface {
	// Check compiles code; an error that is not an *engine.Error names
	// the line and column of the fault in its text.
	Check(code string) error
	// RunWorkflow runs code, the body of an async function, on a runtime
	// whose ctx has the members vars builds (step and input here; the
	// runner adds helpers), under the execution budget, and returns what
	// the function's promise resolved to. name is the workflow's: what
	// the code writes is attributed to it (history's via, the audit).
	RunWorkflow(ctx context.Context, name, code string, vars func(rt *goja.Runtime) map[string]any) (any, error)
}

// Options are what the module needs besides the core.
type Options struct {
	Runner Runner
}

// Workflows keeps workflow definitions and their runs, and executes runs
// on the leader.
type Workflows struct {
	core   *engine.Engine
	runner Runner
	log    *slog.Logger
	// kick is signalled (never blocking) when a run may have become
	// runnable: started, retried, an event delivered, a restore.
	kick chan struct{}
	// stepPrg builds the step object (step.js).
	stepPrg *goja.Program
}

// New wires the workflows module to core: its tables, commands and
// results, and the observer that wakes the executor.
func New(core *engine.Engine, opts Options) *Workflows {
	m := &Workflows{core: core, runner: opts.Runner, log: core.Logger(), kick: make(chan struct{}, 1), stepPrg: compileStep()}
	m.registerTables()
	m.registerCommands()
	m.registerPruner()
	m.registerRestoreCarrier()
	core.OnEvents(m.observe)
	return m
}

// Limits.
const (
	// maxJSON bounds an input, a step's result, an event's payload and a
	// run's output (their JSON).
	maxJSON = 1 << 20
	// maxCode bounds a workflow's code.
	maxCode = 256 << 10
	// maxStepName bounds a step's name (and an event's name and key).
	maxStepName = 200
	// defaultRetries is how often a throwing step.run is tried again
	// (CONTRACT.md: "retries (default 3)"); a step may ask for 0 to
	// maxRetries.
	defaultRetries = 3
	maxRetries     = 10
)

// Errors of the module.
var (
	errNoWorkflow = engine.Errorf(engine.KindNotFound, "The workflow wasn't found")
	errNoRun      = engine.Errorf(engine.KindNotFound, "The workflow run wasn't found")
	errNotFailed  = engine.Errorf(engine.KindConflict, "Only a failed run can be retried")
	// errStale refuses a command of an execution that another claim
	// superseded, or of a run that is no longer there.
	errStale = engine.Errorf(engine.KindConflict, "The run moved on: another execution holds it or it ended")
	// errNotDue refuses a claim of a run that has nothing to do.
	errNotDue = engine.Errorf(engine.KindConflict, "The run is not due")
)

// namePattern is a workflow's name: the collection name pattern with
// dashes allowed.
var namePattern = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$`)

// reserved names are path segments of the admin routes
// (/admin/workflows/runs/:id, /admin/workflows/events).
var reserved = map[string]bool{"runs": true, "events": true}

// checkName refuses a name a workflow cannot have.
func checkName(name string) error {
	switch {
	case !namePattern.MatchString(name):
		return engine.FieldError("name", "must match ^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$")
	case reserved[name]:
		return engine.FieldError("name", "is reserved")
	}
	return nil
}
