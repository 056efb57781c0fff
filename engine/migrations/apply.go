package migrations

import (
	"context"
	"errors"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// applyCmd is a whole plan: the steps the core built and the versions of
// the collections they were validated against.
type applyCmd struct {
	Expect map[string]int64    `json:"expect"`
	Steps  []engine.SchemaStep `json:"steps"`
}

// Apply brings the node's schema to s in mode, through one command, and
// answers the diff it applied and the command's log index. A snapshot
// that changes nothing proposes nothing (index 0).
func (m *Migrations) Apply(ctx context.Context, s *Snapshot, mode Mode) (*Diff, uint64, error) {
	for attempt := 0; ; attempt++ {
		d, err := m.Diff(ctx, s, mode)
		if err != nil || d.Applies == 0 {
			return d, 0, err
		}
		cur, err := m.Snapshot(ctx)
		if err != nil {
			return nil, 0, err
		}
		plan, err := m.plan(ctx, cur, s, d)
		if err != nil {
			return nil, 0, err
		}
		_, idx, err := m.core.Propose(ctx, cmdApply, applyCmd{Expect: plan.Expect(), Steps: plan.Steps()})
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		return d, idx, nil
	}
}

func (m *Migrations) applyPlan(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[applyCmd](cmd)
	if err != nil {
		return nil, err
	}
	return nil, m.core.Schema().ApplyPlan(tx, c.Expect, c.Steps)
}

// plan turns the changes of d that apply into the core's steps, in an
// order each step can stand on: creations (relation targets first, views
// last), index drops, collection changes, index creations, collection
// drops (views first, then collections before the ones they relate to).
func (m *Migrations) plan(ctx context.Context, cur, want *Snapshot, d *Diff) (*engine.SchemaPlan, error) {
	have, wanted := byName(cur.Collections), byName(want.Collections)
	p := m.core.Schema().NewPlan()
	changed := map[string]bool{}
	var creates []*Collection
	var drops []*Collection
	var ixAdd, ixDrop []Change
	for _, c := range d.Changes {
		if !c.Applies {
			continue
		}
		key := strings.ToLower(c.Collection)
		switch c.Op {
		case "create_collection":
			creates = append(creates, wanted[key])
		case "drop_collection":
			drops = append(drops, have[key])
		case "add_index":
			ixAdd = append(ixAdd, c)
		case "drop_index":
			ixDrop = append(ixDrop, c)
		default:
			changed[key] = true
		}
	}
	for _, c := range createOrder(creates) {
		if err := p.Create(ctx, c.definition()); err != nil {
			return nil, stepFailed("create collection "+c.Name, c.Name, err)
		}
	}
	for _, c := range ixDrop {
		if err := p.DeleteIndex(c.Collection, c.Index); err != nil {
			return nil, stepFailed("drop index "+c.Index, c.Collection, err)
		}
	}
	for _, h := range cur.Collections {
		key := strings.ToLower(h.Name)
		if !changed[key] {
			continue
		}
		def := wanted[key]
		if d.Mode == Additive {
			def = extended(&h, wanted[key])
		}
		if err := p.Update(ctx, h.Name, def.definition()); err != nil {
			return nil, stepFailed("change collection "+h.Name, h.Name, err)
		}
	}
	for _, c := range ixAdd {
		if err := p.CreateIndex(c.Collection, c.Field, strings.HasPrefix(c.Index, "uniq_")); err != nil {
			return nil, stepFailed("add index "+c.Index, c.Collection, err)
		}
	}
	for _, c := range dropOrder(drops) {
		if err := p.Delete(c.Name); err != nil {
			return nil, stepFailed("drop collection "+c.Name, c.Name, err)
		}
	}
	return p, nil
}

// extended is h with the fields of w it lacks appended: the additive
// mode's change of a collection both sides have.
func extended(h, w *Collection) *Collection {
	out := *h
	out.Fields = append([]Field(nil), h.Fields...)
	names := map[string]bool{}
	for _, f := range h.Fields {
		names[strings.ToLower(f.Name)] = true
	}
	for _, f := range w.Fields {
		if !names[strings.ToLower(f.Name)] {
			out.Fields = append(out.Fields, f)
		}
	}
	return &out
}

// stepFailed names the change a domain error refused, and prefixes its
// details with the collection's name.
func stepFailed(what, coll string, err error) error {
	de := engine.AsError(err)
	if de == nil {
		return err
	}
	out := *de
	out.Message = "Snapshot cannot be applied: " + what + ": " + de.Message
	if len(de.Details) > 0 {
		out.Details = map[string]any{}
		for k, v := range de.Details {
			out.Details[coll+"."+k] = v
		}
	}
	return &out
}

// relationTargets are the lower-cased names c's relation fields target.
func relationTargets(c *Collection) []string {
	var out []string
	for _, f := range c.Fields {
		if f.Type == schema.FieldRelation && !strings.EqualFold(f.Collection, c.Name) {
			out = append(out, strings.ToLower(f.Collection))
		}
	}
	return out
}

// createOrder puts each collection after the created collections its
// relations target, and views after every table; a cycle keeps the
// snapshot's order (the plan then says which relation does not resolve).
func createOrder(cs []*Collection) []*Collection {
	var tables, views []*Collection
	for _, c := range cs {
		if c.Type == schema.TypeView {
			views = append(views, c)
		} else {
			tables = append(tables, c)
		}
	}
	pending := map[string]bool{}
	for _, c := range tables {
		pending[strings.ToLower(c.Name)] = true
	}
	var out []*Collection
	for len(tables) > 0 {
		var rest []*Collection
		for _, c := range tables {
			ready := true
			for _, t := range relationTargets(c) {
				if pending[t] {
					ready = false
				}
			}
			if ready {
				out = append(out, c)
				delete(pending, strings.ToLower(c.Name))
			} else {
				rest = append(rest, c)
			}
		}
		if len(rest) == len(tables) {
			out = append(out, rest...)
			break
		}
		tables = rest
	}
	return append(out, views...)
}

// dropOrder drops views first, then each collection before the dropped
// collections its relations target (a drop is refused while a relation
// points at the collection).
func dropOrder(cs []*Collection) []*Collection {
	var out, tables []*Collection
	for _, c := range cs {
		if c.Type == schema.TypeView {
			out = append(out, c)
		} else {
			tables = append(tables, c)
		}
	}
	for len(tables) > 0 {
		targeted := map[string]bool{}
		for _, c := range tables {
			for _, t := range relationTargets(c) {
				targeted[t] = true
			}
		}
		var rest []*Collection
		for _, c := range tables {
			if targeted[strings.ToLower(c.Name)] {
				rest = append(rest, c)
			} else {
				out = append(out, c)
			}
		}
		if len(rest) == len(tables) {
			return append(out, rest...)
		}
		tables = rest
	}
	return out
}
