package stack

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"svcd/engine"
	"svcd/engine/jsvm"
)

// workflowRunner runs workflow code for engine/workflows on the plain
// runtime layer of engine/jsvm, under execution.timeout_ms. It passes the
// members the module builds (step, input) and no helpers yet: the
// helpers object is engine/jsvm's, and this adapter gives way to its
// runner once that exists.
type workflowRunner struct {
	vm  *jsvm.VM
	eng *engine.Engine
}

// Check implements workflows.Runner.
func (r workflowRunner) Check(code string) error { return r.vm.Check(code) }

// RunWorkflow implements workflows.Runner.
func (r workflowRunner) RunWorkflow(ctx context.Context, code string, vars func(rt *goja.Runtime) map[string]any) (any, error) {
	return r.vm.Run(ctx, jsvm.Invocation{Code: code, Vars: vars, Timeout: executionBudget(r.eng)})
}

// executionBudget is execution.timeout_ms (0 or less: none; a malformed
// value: the default, 5 s).
func executionBudget(eng *engine.Engine) time.Duration {
	ms, err := strconv.ParseInt(strings.TrimSpace(eng.Setting("execution.timeout_ms")), 10, 64)
	if err != nil {
		ms = 5000
	}
	if ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}
