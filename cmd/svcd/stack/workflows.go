package stack

import (
	"context"

	"github.com/dop251/goja"

	"svcd/engine/jsvm"
)

// workflowRunner runs workflow code for engine/workflows through the
// JavaScript module: the members the workflows module builds (step,
// input) plus the helpers every kind of code gets, as the system, under
// execution.timeout_ms; writes are attributed to the workflow.
type workflowRunner struct{ js *jsvm.Module }

// Check implements workflows.Runner.
func (r workflowRunner) Check(code string) error { return r.js.VM().Check(code) }

// RunWorkflow implements workflows.Runner.
func (r workflowRunner) RunWorkflow(ctx context.Context, name, code string, vars func(rt *goja.Runtime) map[string]any) (any, error) {
	return r.js.Run(ctx, jsvm.Call{Kind: "workflow", ID: name, Code: code, VarsFunc: vars})
}
