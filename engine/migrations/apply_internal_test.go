package migrations

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"svcd/engine"
	"svcd/fsm/fsmtest"
)

// newModule wires the module on a real store whose commands apply as a
// log would deliver them.
func newModule(t *testing.T) (*engine.Engine, *Migrations) {
	t.Helper()
	store := fsmtest.Open(t)
	e, err := engine.New(engine.Options{Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m := New(e)
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	e.SetProposer(&fsmtest.Log{S: store})
	if err := e.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, m
}

// TestApplyRevalidates: a plan made before another schema change
// committed is refused by the apply (ErrSchemaMoved) and changes nothing;
// Apply plans again and succeeds.
func TestApplyRevalidates(t *testing.T) {
	e, m := newModule(t)
	ctx := context.Background()
	if _, _, err := e.Schema().CreateCollection(ctx, []byte(`{"name":"posts","type":"base","fields":[{"name":"title","type":"text"}]}`)); err != nil {
		t.Fatal(err)
	}
	want, err := Decode([]byte(`{"version":1,"collections":[
		{"name":"posts","type":"base","fields":[{"name":"title","type":"text"},{"name":"body","type":"text"}],"indexes":[{"field":"body"}]},
		{"name":"tags","type":"base","fields":[{"name":"post","type":"relation","collection":"posts"}],"indexes":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.Diff(ctx, want, Additive)
	if err != nil || d.Applies != 3 {
		t.Fatalf("diff: %+v %v", d, err)
	}
	cur, _ := m.Snapshot(ctx)
	plan, err := m.plan(ctx, cur, want, d)
	if err != nil {
		t.Fatal(err)
	}
	// Another change commits between the plan and its apply.
	if _, _, err := e.Schema().UpdateCollection(ctx, "posts", []byte(`{"view_rule":""}`)); err != nil {
		t.Fatal(err)
	}
	_, _, err = e.Propose(ctx, cmdApply, applyCmd{Expect: plan.Expect(), Steps: plan.Steps()})
	if !errors.Is(err, engine.ErrSchemaMoved) {
		t.Fatalf("stale plan: %v, want ErrSchemaMoved", err)
	}
	if _, err := e.Schema().Collection("tags"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a refused plan created tags: %v", err)
	}
	if _, _, err := m.Apply(ctx, want, Additive); err != nil {
		t.Fatal(err)
	}
	if d, err := m.Diff(ctx, want, Additive); err != nil || d.Applies != 0 {
		t.Fatalf("diff after apply: %+v %v", d, err)
	}
	// The additive apply kept the rule changed in between.
	if c, _ := e.Schema().Collection("posts"); c.ViewRule == nil || *c.ViewRule != "" {
		t.Fatalf("posts view_rule = %v, want the one set in between", c.ViewRule)
	}
}
