package workflows

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"

	"svcd/engine"
	"svcd/fsm/fsmtest"
)

// The apply rules of the module's commands, on a real store whose log is
// fsmtest's (each command the next entry): the fence of an execution, the
// memo that keeps its first result, the keys and deliveries of emits, the
// claims that refuse what is not due. No JavaScript runs here.

// checkOnly is a Runner that compiles everything and runs nothing.
type checkOnly struct{}

func (checkOnly) Check(string) error { return nil }
func (checkOnly) RunWorkflow(context.Context, string, string, func(*goja.Runtime) map[string]any) (any, error) {
	return nil, errors.New("checkOnly runs no code")
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type applyEnv struct {
	t   *testing.T
	m   *Workflows
	clk *testClock
	ctx context.Context
}

func newApplyEnv(t *testing.T) *applyEnv {
	t.Helper()
	store := fsmtest.Open(t)
	clk := &testClock{t: time.Unix(1_800_000_000, 0)}
	e, err := engine.New(engine.Options{Store: store, Clock: clk.now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m := New(e, Options{Runner: checkOnly{}})
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	e.SetProposer(&fsmtest.Log{S: store})
	env := &applyEnv{t: t, m: m, clk: clk, ctx: context.Background()}
	if err := e.Migrate(env.ctx); err != nil {
		t.Fatal(err)
	}
	return env
}

// propose commits a command of type t and returns its error.
func (a *applyEnv) propose(c any) error {
	a.t.Helper()
	var typ = cmdTransition
	switch c.(type) {
	case stepCmd:
		typ = cmdStep
	case emitCmd:
		typ = cmdEmit
	}
	_, _, err := a.m.core.Propose(a.ctx, typ, c)
	return err
}

func (a *applyEnv) want(what string, err, want error) {
	a.t.Helper()
	if !errors.Is(err, want) && !(want == nil && err == nil) {
		a.t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

func (a *applyEnv) run(id string) *Run {
	a.t.Helper()
	r, err := a.m.GetRun(a.ctx, id)
	if err != nil {
		a.t.Fatal(err)
	}
	return r
}

func (a *applyEnv) now() int64 { return a.clk.now().Unix() }

func TestApplyRules(t *testing.T) {
	a := newApplyEnv(t)
	if _, _, err := a.m.Create(a.ctx, "w", "return 1"); err != nil {
		t.Fatal(err)
	}
	id, err := a.m.Start(a.ctx, "w", map[string]any{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _, err := a.m.DueRuns(a.ctx, 10); err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("a started run is due: %v %v", ids, err)
	}

	// A claim is a compare-and-set on the executions.
	a.want("claim", a.propose(transitionCmd{Op: opClaim, Run: id, Exec: 0, Now: a.now()}), nil)
	a.want("a second claim of the same count", a.propose(transitionCmd{Op: opClaim, Run: id, Exec: 0, Now: a.now()}), errStale)

	// The memo keeps its first result; a stale execution records nothing.
	a.want("memo", a.propose(stepCmd{Run: id, Exec: 1, Step: "s", Outcome: outCompleted, Result: []byte(`1`), Attempts: 1, Now: a.now()}), nil)
	a.want("the same memo again", a.propose(stepCmd{Run: id, Exec: 1, Step: "s", Outcome: outCompleted, Result: []byte(`2`), Attempts: 2, Now: a.now()}), nil)
	a.want("a failure of a completed step", a.propose(stepCmd{Run: id, Exec: 1, Step: "s", Outcome: outRetrying, Error: "x", Attempts: 3, Now: a.now()}), nil)
	a.want("a stale execution", a.propose(stepCmd{Run: id, Exec: 0, Step: "t", Outcome: outCompleted, Now: a.now()}), errStale)
	r := a.run(id)
	if len(r.Steps) != 1 || string(r.Steps[0].Result) != "1" || r.Steps[0].Attempts != 1 || r.Steps[0].State != "completed" {
		t.Fatalf("the memo after a second record: %+v", r.Steps)
	}

	// A wait with a key: only that key's events are delivered.
	k := "k1"
	a.want("park waiting", a.propose(transitionCmd{Op: opWait, Run: id, Exec: 1, Step: "w", Event: "e", Key: &k, Now: a.now()}), nil)
	a.want("a claim of a waiting run with nothing delivered", a.propose(transitionCmd{Op: opClaim, Run: id, Exec: 1, Now: a.now()}), errNotDue)
	for _, c := range []struct {
		event string
		key   string
		want  int
	}{{"e", "other", 0}, {"e", "", 0}, {"f", "k1", 0}, {"e", "k1", 1}} {
		res, _, err := a.m.EmitEvent(a.ctx, c.event, map[string]any{"n": 1}, c.key)
		if err != nil || res.Woken != c.want {
			t.Fatalf("emit %s/%q: %+v %v, want %d", c.event, c.key, res, err, c.want)
		}
	}
	a.want("claim for the delivery", a.propose(transitionCmd{Op: opClaim, Run: id, Exec: 1, Now: a.now()}), nil)
	// An event emitted while the leader checks the first one is kept.
	res, _, err := a.m.EmitEvent(a.ctx, "e", map[string]any{"n": 2}, "k1")
	if err != nil || res.Woken != 1 {
		t.Fatalf("emit to a run taken up from its wait: %+v %v", res, err)
	}
	run, err := a.m.loadRun(a.ctx, id)
	if err != nil || len(run.deliveries) != 2 {
		t.Fatalf("deliveries: %+v %v", run, err)
	}
	first, second := run.deliveries[0].seq, run.deliveries[1].seq
	a.want("park again, the first refused by match", a.propose(transitionCmd{Op: opWait, Run: id, Exec: 2, Step: "w", Event: "e", Key: &k,
		Checked: first, Now: a.now()}), nil)
	if ids, _, _ := a.m.DueRuns(a.ctx, 10); len(ids) != 1 {
		t.Fatalf("a waiting run with a newer delivery is due: %v", ids)
	}
	a.want("claim", a.propose(transitionCmd{Op: opClaim, Run: id, Exec: 2, Now: a.now()}), nil)
	a.want("match of a dropped delivery", a.propose(stepCmd{Run: id, Exec: 3, Step: "w", Outcome: outMatched, Delivery: first, Now: a.now()}), errStale)
	a.want("match", a.propose(stepCmd{Run: id, Exec: 3, Step: "w", Outcome: outMatched, Delivery: second, Now: a.now()}), nil)
	r = a.run(id)
	if r.Waiting != nil || string(r.Steps[1].Result) != `{"n":2}` || r.Steps[1].State != "completed" {
		t.Fatalf("after the match: %+v", r)
	}

	// A sleep is claimed only once its wake time has come; the claim
	// completes it.
	a.want("sleep", a.propose(transitionCmd{Op: opSleep, Run: id, Exec: 3, Step: "z", WakeAt: a.now() + 10, Now: a.now()}), nil)
	a.want("an early claim", a.propose(transitionCmd{Op: opClaim, Run: id, Exec: 3, Now: a.now()}), errNotDue)
	if ids, next, _ := a.m.DueRuns(a.ctx, 10); len(ids) != 0 || next.Unix() != a.now()+10 {
		t.Fatalf("a sleeper: due %v, next %v", ids, next)
	}
	a.clk.advance(10 * time.Second)
	a.want("the claim at its wake time", a.propose(transitionCmd{Op: opClaim, Run: id, Exec: 3, Now: a.now()}), nil)
	if s := a.run(id).Steps[2]; s.Name != "z" || s.State != "completed" {
		t.Fatalf("the sleep after its claim: %+v", s)
	}

	// A run ends once; only a failed one is retried.
	a.want("complete", a.propose(transitionCmd{Op: opComplete, Run: id, Exec: 4, Output: []byte(`7`), Now: a.now()}), nil)
	a.want("fail after completing", a.propose(transitionCmd{Op: opFail, Run: id, Exec: 4, Error: "x", Now: a.now()}), errStale)
	a.want("retry a completed run", a.propose(transitionCmd{Op: opRetry, Run: id, Now: a.now()}), errNotFailed)
	if r := a.run(id); r.State != "completed" || string(r.Output) != "7" || r.Finished == nil || r.Executions != 4 {
		t.Fatalf("completed run: %+v", r)
	}
	a.want("claim a missing run", a.propose(transitionCmd{Op: opClaim, Run: "nope", Now: a.now()}), errNoRun)
}
