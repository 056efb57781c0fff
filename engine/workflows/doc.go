// Package workflows is the engine's workflows module (SPEC.md "Workflow
// semantics"): durable functions of (step, input) written by admins in
// JavaScript, whose runs survive restarts and leader changes.
//
// # The log is the memo
//
// A run is re-executed from the top each time it advances. What it did
// before is in the replicated tables, written by commands like any other
// write: a completed step.run has a memo (its result as JSON), a
// step.sleep a wake time, a step.waitForEvent the event it waits for. On
// re-execution step.run returns its memo without calling its function,
// so a step that completed once is never run again; one whose leader died
// while it ran, before its memo committed, runs again (at least once).
//
// # Who executes
//
// Only the leader executes runs (scheduler.Workflows drives ExecuteRun
// while this node leads). An execution begins with a claim, a command
// that moves the run to running and counts its executions; every later
// command of that execution names the count it claimed and is refused
// once another claim has superseded it (the fence). A new leader claims
// the runs the old one left running, so nothing of a deposed leader that
// still runs code can change a run after that.
//
// # One step per advance
//
// An advance runs the code under one execution budget
// (execution.timeout_ms) until it does something new: a step.run
// function returns or throws, step.sleep or step.waitForEvent parks, or
// the function ends. The step object then throws a private signal that
// unwinds the code, and the Go side proposes what happened: the memo, the
// park, the completion or the failure. After a memo the next advance
// starts at once, from the top, with a fresh budget. Steps run in
// parallel (Promise.all) all complete in the same advance.
//
// # Events and match
//
// An emit is a command: it delivers the event to the runs whose pending
// waitForEvent names that event (and that key, when the wait gave one):
// one row per run in the deliveries table. The match function is
// JavaScript, so it cannot run inside the apply: the leader claims the
// run and re-executes it, and waitForEvent calls match on the deliveries
// in log order. The first that matches becomes the step's memo (its
// payload is what waitForEvent returns); the ones that did not match are
// dropped when the run parks again. Events emitted before a run reached
// its waitForEvent are not delivered to it.
//
// Nothing here runs JavaScript inside fsm.Apply: the applies read and
// write the module's tables only, with every time and id resolved by the
// proposer.
package workflows
