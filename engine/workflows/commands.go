package workflows

import (
	"encoding/json"

	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused.
const (
	// cmdDefine creates, changes or deletes a workflow.
	cmdDefine fsm.Type = 100
	// cmdStart starts a run.
	cmdStart fsm.Type = 101
	// cmdStep records what one step of an execution did (its memo).
	cmdStep fsm.Type = 102
	// cmdTransition moves a run: claim, sleep, wait, complete, fail,
	// retry.
	cmdTransition fsm.Type = 103
	// cmdEmit delivers an event to the runs waiting for it.
	cmdEmit fsm.Type = 104
)

// evRunnable is the event of a command after which a run may have
// become runnable (started, retried, an event delivered): the executor
// looks at once instead of at its next poll.
const evRunnable = "workflows.runnable"

func (m *Workflows) registerCommands() {
	engine.RegisterResult[EmitResult](m.core, "workflows.emit")
	m.core.Command(cmdDefine, "workflows.define", m.applyDefine)
	m.core.Command(cmdStart, "workflows.start", m.applyStart)
	m.core.Command(cmdStep, "workflows.step", m.applyStep)
	m.core.Command(cmdTransition, "workflows.transition", m.applyTransition)
	m.core.Command(cmdEmit, "workflows.emit", m.applyEmit)
}

// EmitResult is what an emit did: how many waiting runs received the
// event (their match functions decide later whether it is theirs).
type EmitResult struct {
	Woken int `json:"woken"`
}

// defineCmd creates (Op "create"), changes ("update") or deletes
// ("delete") workflow Name.
type defineCmd struct {
	Op   string `json:"op"`
	Name string `json:"name"`
	Code string `json:"code,omitempty"`
	Now  int64  `json:"now"`
}

// startCmd starts run ID of Workflow.
type startCmd struct {
	ID       string          `json:"id"`
	Workflow string          `json:"workflow"`
	Input    json.RawMessage `json:"input"`
	Now      int64           `json:"now"`
}

// Outcomes of a step (stepCmd.Outcome).
const (
	outCompleted = "completed" // a step.run function returned
	outRetrying  = "retrying"  // it threw; attempts remain
	outFailed    = "failed"    // it threw on its last attempt: the run fails
	outMatched   = "matched"   // a waitForEvent matched delivery Delivery
	outTimedOut  = "timed_out" // a waitForEvent's timeout passed
)

// stepCmd records what step Step of run Run did in execution Exec.
type stepCmd struct {
	Run      string          `json:"run"`
	Exec     int64           `json:"exec"`
	Step     string          `json:"step"`
	Outcome  string          `json:"outcome"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Attempts int             `json:"attempts,omitempty"`
	Delivery uint64          `json:"delivery,omitempty"`
	Now      int64           `json:"now"`
}

// Transitions of a run (transitionCmd.Op).
const (
	opClaim    = "claim"
	opSleep    = "sleep"
	opWait     = "wait"
	opComplete = "complete"
	opFail     = "fail"
	opRetry    = "retry"
)

// transitionCmd moves run Run. Exec is, for a claim, the execution count
// the claimer read (the claim is a compare-and-set); for the others but
// retry, the execution that proposes it.
type transitionCmd struct {
	Op   string `json:"op"`
	Run  string `json:"run"`
	Exec int64  `json:"exec"`
	// Step, WakeAt: the sleeping or waiting step, and when it wakes
	// (a waiting step: its timeout; 0: none).
	Step   string `json:"step,omitempty"`
	WakeAt int64  `json:"wake_at,omitempty"`
	// Event, Key: what a waiting step waits for (Key nil: any key).
	// Checked is the last delivery its match functions refused.
	Event   string  `json:"event,omitempty"`
	Key     *string `json:"key,omitempty"`
	Checked uint64  `json:"checked,omitempty"`
	// Output of a completion, Error of a failure.
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	Now    int64           `json:"now"`
}

// emitCmd delivers Event (with Key, when set) carrying Payload.
type emitCmd struct {
	Event   string          `json:"event"`
	Key     *string         `json:"key,omitempty"`
	Payload json.RawMessage `json:"payload"`
	Now     int64           `json:"now"`
}

// observe wakes the executor after a command that may have made a run
// runnable, and after anything that replaced the tables.
func (m *Workflows) observe(events []fsm.Event) {
	for _, ev := range events {
		if ev.Kind == evRunnable || ev.Kind == fsm.KindRestore || ev.Kind == engine.EvMigrate {
			m.wake()
			return
		}
	}
}

// wake signals RunsChanged (it never blocks).
func (m *Workflows) wake() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// RunsChanged is signalled when runs may have become runnable.
func (m *Workflows) RunsChanged() <-chan struct{} { return m.kick }
