package workflows

import (
	"encoding/json"
	"math"
	"sort"
	"time"

	"github.com/dop251/goja"
)

// advance is one re-execution of a run's code: what the memos say, and
// what the code did that is new. Its methods are the host functions of
// step.js; they run on the runtime's goroutine, one at a time.
type advance struct {
	m    *Workflows
	run  *loadedRun
	exec int64
	// now is the advance's time in seconds; nowExact with its fraction
	// (a wake time is rounded up from it: a sleep never ends early).
	now      int64
	nowExact float64
	// steps are the run's memos by name; deliveries the events delivered
	// to its pending wait, in log order.
	steps      map[string]*memo
	deliveries []delivery
	// used names the steps this advance reached; inFlight the step.run
	// functions called and not yet settled (name to attempt); retries
	// their retry budgets.
	used     map[string]bool
	inFlight map[string]int
	retries  map[string]int
	// recorded are the new step outcomes; park the first park (ignored
	// when steps were recorded: the next advance parks again).
	recorded []stepCmd
	park     *transitionCmd
	// waits are the parks of the waitForEvent steps reached, by name,
	// until their deliveries are checked (parkWait).
	waits map[string]*transitionCmd
}

// memo is a step's row.
type memo struct {
	kind, state string
	result      string
	attempts    int
	wakeAt      int64
}

// delivery is an event delivered to the run's pending wait.
type delivery struct {
	seq                  uint64
	step, event, payload string
	key                  *string
}

func newAdvance(m *Workflows, run *loadedRun, exec int64, now time.Time) *advance {
	return &advance{m: m, run: run, exec: exec, now: now.Unix(), nowExact: float64(now.UnixNano()) / 1e9, steps: run.steps, deliveries: run.deliveries,
		used: map[string]bool{}, inFlight: map[string]int{}, retries: map[string]int{}, waits: map[string]*transitionCmd{}}
}

// ended reports whether the advance has done something new: from then on
// every step function only unwinds.
func (a *advance) ended() bool { return len(a.recorded) > 0 || a.park != nil }

// record notes a step outcome.
func (a *advance) record(c stepCmd) {
	c.Run, c.Exec, c.Now = a.run.id, a.exec, a.now
	a.recorded = append(a.recorded, c)
}

// begin is step.run's first look: the memo ({done, json}), the attempt to
// make ({attempt}), or {end}.
func (a *advance) begin(rt *goja.Runtime, c goja.FunctionCall) goja.Value {
	name := a.stepName(rt, c.Argument(0), "run")
	retries := defaultRetries
	if v := option(rt, c.Argument(1), "retries"); !goja.IsUndefined(v) {
		n, ok := number(v)
		if !ok || n < 0 || n != math.Trunc(n) || n > maxRetries {
			panic(rt.NewTypeError("step.run: retries must be a whole number from 0 to %d", maxRetries))
		}
		retries = int(n)
	}
	s := a.steps[name]
	switch {
	case s != nil && s.state == "completed":
		return answer(rt, "done", true, "json", s.result)
	case a.ended():
		return answer(rt, "end", true)
	}
	attempt := 1
	if s != nil && s.state == "retrying" {
		attempt = s.attempts + 1
	}
	a.inFlight[name], a.retries[name] = attempt, retries
	a.m.log.Debug("workflow step function called", "workflow", a.run.workflow, "run", a.run.id, "step", name, "attempt", attempt)
	return answer(rt, "attempt", attempt)
}

// done records a step.run's result (JSON text).
func (a *advance) done(rt *goja.Runtime, c goja.FunctionCall) {
	name := c.Argument(0).String()
	attempt := a.inFlight[name]
	delete(a.inFlight, name)
	raw := c.Argument(2).String()
	if len(raw) > maxJSON || !json.Valid([]byte(raw)) {
		a.fail(name, attempt, "the step's result is not JSON of at most 1 MiB")
		return
	}
	a.record(stepCmd{Step: name, Outcome: outCompleted, Result: json.RawMessage(raw), Attempts: attempt})
}

// failed records a step.run attempt that threw.
func (a *advance) failed(rt *goja.Runtime, c goja.FunctionCall) {
	name := c.Argument(0).String()
	attempt := a.inFlight[name]
	delete(a.inFlight, name)
	a.fail(name, attempt, c.Argument(2).String())
}

// fail records a failed attempt: retrying while the step has retries
// left, failed (and the run with it) after its last.
func (a *advance) fail(name string, attempt int, msg string) {
	out := outRetrying
	if attempt >= 1+a.retries[name] {
		out = outFailed
	}
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	a.record(stepCmd{Step: name, Outcome: out, Error: msg, Attempts: attempt})
}

// interrupted records, for each step.run function still pending when the
// code stopped (its budget ran out, or it awaited what never settles), a
// failed attempt with the reason.
func (a *advance) interrupted(reason string) {
	names := make([]string, 0, len(a.inFlight))
	for name := range a.inFlight {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		a.fail(name, a.inFlight[name], reason)
		delete(a.inFlight, name)
	}
}

// sleep is step.sleep: {} when the sleep is over, else {end} after
// noting the park (the first time: until now + seconds).
func (a *advance) sleep(rt *goja.Runtime, c goja.FunctionCall) goja.Value {
	name := a.stepName(rt, c.Argument(0), "sleep")
	secs := seconds(rt, c.Argument(1), "step.sleep: the duration")
	s := a.steps[name]
	switch {
	case s != nil && (s.state == "completed" || s.wakeAt <= a.now):
		return answer(rt)
	case a.ended():
		return answer(rt, "end", true)
	}
	wake := int64(math.Ceil(a.nowExact + secs))
	if s != nil {
		wake = s.wakeAt
	}
	a.park = &transitionCmd{Op: opSleep, Run: a.run.id, Exec: a.exec, Step: name, WakeAt: wake, Now: a.now}
	return answer(rt, "end", true)
}

// wait is step.waitForEvent's first look: the memo ({done, json}), the
// deliveries its match function must check ({deliveries}), or {end}.
func (a *advance) wait(rt *goja.Runtime, c goja.FunctionCall) goja.Value {
	name := a.stepName(rt, c.Argument(0), "wait")
	opts := c.Argument(1)
	event := name
	if v := option(rt, opts, "event"); !goja.IsUndefined(v) {
		e, ok := v.Export().(string)
		if !ok || e == "" || len(e) > maxStepName {
			panic(rt.NewTypeError("step.waitForEvent: event must be a string of 1 to %d bytes", maxStepName))
		}
		event = e
	}
	key := keyString(rt, option(rt, opts, "key"))
	var timeout float64
	if v := option(rt, opts, "timeout"); !goja.IsUndefined(v) {
		timeout = seconds(rt, v, "step.waitForEvent: timeout")
	}
	if m := option(rt, opts, "match"); !goja.IsUndefined(m) {
		if _, ok := goja.AssertFunction(m); !ok {
			panic(rt.NewTypeError("step.waitForEvent: match must be a function"))
		}
	}
	s := a.steps[name]
	switch {
	case s != nil && s.state == "completed":
		return answer(rt, "done", true, "json", s.result)
	case a.ended():
		return answer(rt, "end", true)
	}
	wake := int64(0)
	if s != nil {
		wake = s.wakeAt // the timeout counts from the first park
	} else if timeout > 0 {
		wake = int64(math.Ceil(a.nowExact + timeout))
	}
	w := &transitionCmd{Op: opWait, Run: a.run.id, Exec: a.exec, Step: name, Event: event, Key: key, WakeAt: wake, Now: a.now}
	a.waits[name] = w
	var list []any
	for _, d := range a.deliveries {
		if d.step != name || d.event != event {
			continue
		}
		var k any
		if d.key != nil {
			k = *d.key
		}
		list = append(list, answer(rt, "seq", d.seq, "payload", d.payload, "event", d.event, "key", k))
		w.Checked = d.seq
	}
	return answer(rt, "deliveries", rt.NewArray(list...))
}

// matched records that the match function of waiting step name accepted
// delivery seq.
func (a *advance) matched(rt *goja.Runtime, c goja.FunctionCall) {
	name := c.Argument(0).String()
	seq, ok := c.Argument(1).Export().(int64)
	if !ok || a.waits[name] == nil {
		panic(rt.NewTypeError("step.waitForEvent: no such delivery"))
	}
	delete(a.waits, name)
	a.record(stepCmd{Step: name, Outcome: outMatched, Delivery: uint64(seq)})
}

// parkWait ends waiting step name's look at its deliveries, none of which
// matched: its timeout, when it passed, completes it with null;
// otherwise the run parks waiting.
func (a *advance) parkWait(rt *goja.Runtime, c goja.FunctionCall) {
	name := c.Argument(0).String()
	w := a.waits[name]
	if w == nil {
		panic(rt.NewTypeError("step.waitForEvent: not waiting"))
	}
	delete(a.waits, name)
	switch {
	case w.WakeAt > 0 && w.WakeAt <= a.now && a.steps[name] != nil:
		a.record(stepCmd{Step: name, Outcome: outTimedOut})
	case a.park == nil:
		a.park = w
	}
}
