package migrations

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Change is one difference between the node and a snapshot.
type Change struct {
	// Op is create_collection, drop_collection, add_field, change_field,
	// drop_field, change_rule, change_collection (history switch, auth
	// options, view query), add_index or drop_index.
	Op         string `json:"op"`
	Collection string `json:"collection"`
	// Field names the field (add, change, drop), Rule the rule
	// (view_rule, ...), Option the collection option, Index the index.
	Field  string `json:"field,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Option string `json:"option,omitempty"`
	Index  string `json:"index,omitempty"`
	// From and To are the node's and the snapshot's value of what changes.
	From any `json:"from,omitempty"`
	To   any `json:"to,omitempty"`
	// DataLoss says that applying the change loses data: Lost values of a
	// dropped field, records of a dropped collection, or values of a field
	// whose type changes (converted, and dropped where they do not fit).
	DataLoss bool  `json:"data_loss"`
	Lost     int64 `json:"lost"`
	// Applies says whether the diff's mode applies the change (additive
	// applies creations and additions only).
	Applies bool `json:"applies"`
}

// Diff is what applying a snapshot in a mode would change.
type Diff struct {
	Mode    Mode     `json:"mode"`
	Changes []Change `json:"changes"`
	// DataLoss is set when a change the mode applies loses data.
	DataLoss bool `json:"data_loss"`
	// Applies counts the changes the mode applies.
	Applies int `json:"applies"`
}

// additiveOps are the changes the additive mode applies.
var additiveOps = map[string]bool{"create_collection": true, "add_field": true, "add_index": true}

// Diff compares the node's committed schema with s.
func (m *Migrations) Diff(ctx context.Context, s *Snapshot, mode Mode) (*Diff, error) {
	cur, err := m.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	changes, err := m.compare(ctx, cur, s)
	if err != nil {
		return nil, err
	}
	d := &Diff{Mode: mode, Changes: changes}
	for i := range d.Changes {
		c := &d.Changes[i]
		c.Applies = mode == Sync || additiveOps[c.Op]
		if c.Applies {
			d.Applies++
			d.DataLoss = d.DataLoss || c.DataLoss
		}
	}
	return d, nil
}

// Snapshot is the node's committed schema.
func (m *Migrations) Snapshot(ctx context.Context) (*Snapshot, error) {
	sc := m.core.Schema()
	return Take(sc.Collections(), m.core.SchemaVersion(), func(coll string) ([]engine.Index, error) {
		return sc.Indexes(ctx, coll)
	})
}

func byName(cs []Collection) map[string]*Collection {
	out := map[string]*Collection{}
	for i := range cs {
		out[strings.ToLower(cs[i].Name)] = &cs[i]
	}
	return out
}

// compare lists the changes from cur to want, in the snapshot's order:
// creations, then changes of collections both have, then drops.
func (m *Migrations) compare(ctx context.Context, cur, want *Snapshot) ([]Change, error) {
	have, wanted := byName(cur.Collections), byName(want.Collections)
	out := []Change{}
	for _, w := range want.Collections {
		if have[strings.ToLower(w.Name)] == nil {
			out = append(out, Change{Op: "create_collection", Collection: w.Name})
			for _, ix := range w.Indexes {
				out = append(out, Change{Op: "add_index", Collection: w.Name, Index: ix.name(w.Name), Field: ix.Field})
			}
		}
	}
	for _, w := range want.Collections {
		h := have[strings.ToLower(w.Name)]
		if h == nil {
			continue
		}
		cs, err := m.compareCollection(ctx, h, &w)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	for _, h := range cur.Collections {
		if wanted[strings.ToLower(h.Name)] != nil {
			continue
		}
		n, err := m.count(ctx, "SELECT count(*) FROM "+quote(h.Name), h.Type != schema.TypeView)
		if err != nil {
			return nil, err
		}
		out = append(out, Change{Op: "drop_collection", Collection: h.Name, DataLoss: n > 0, Lost: n})
	}
	return out, nil
}

// compareCollection lists the changes of one collection both sides have.
func (m *Migrations) compareCollection(ctx context.Context, h, w *Collection) ([]Change, error) {
	out := []Change{}
	if h.Type != w.Type {
		out = append(out, Change{Op: "change_collection", Collection: h.Name, Option: "type", From: h.Type, To: w.Type})
	}
	if h.Type != schema.TypeView {
		fs, err := m.compareFields(ctx, h, w)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	rules := []struct {
		name     string
		from, to *string
	}{
		{"view_rule", h.ViewRule, w.ViewRule}, {"create_rule", h.CreateRule, w.CreateRule},
		{"update_rule", h.UpdateRule, w.UpdateRule}, {"delete_rule", h.DeleteRule, w.DeleteRule},
	}
	for _, r := range rules {
		if h.Type == schema.TypeView && r.name != "view_rule" {
			continue
		}
		if !sameRule(r.from, r.to) {
			out = append(out, Change{Op: "change_rule", Collection: h.Name, Rule: r.name, From: ruleText(r.from), To: ruleText(r.to)})
		}
	}
	if h.HistoryEnabled != w.HistoryEnabled {
		out = append(out, Change{Op: "change_collection", Collection: h.Name, Option: "history_enabled", From: h.HistoryEnabled, To: w.HistoryEnabled})
	}
	if h.Type == schema.TypeView && normQuery(h.ViewQuery) != normQuery(w.ViewQuery) {
		out = append(out, Change{Op: "change_collection", Collection: h.Name, Option: "view_query", From: h.ViewQuery, To: w.ViewQuery})
	}
	if h.Type == schema.TypeAuth && w.Type == schema.TypeAuth && !sameJSON(authOptions(h.AuthOptions), authOptions(w.AuthOptions)) {
		out = append(out, Change{Op: "change_collection", Collection: h.Name, Option: "auth_options", From: authOptions(h.AuthOptions), To: authOptions(w.AuthOptions)})
	}
	hx, wx := map[Index]bool{}, map[Index]bool{}
	for _, ix := range h.Indexes {
		hx[ix] = true
	}
	for _, ix := range w.Indexes {
		wx[ix] = true
		if !hx[ix] {
			out = append(out, Change{Op: "add_index", Collection: h.Name, Index: ix.name(h.Name), Field: ix.Field})
		}
	}
	for _, ix := range h.Indexes {
		if !wx[ix] {
			out = append(out, Change{Op: "drop_index", Collection: h.Name, Index: ix.name(h.Name), Field: ix.Field})
		}
	}
	return out, nil
}

// compareFields lists added, changed and dropped fields, matched by name.
func (m *Migrations) compareFields(ctx context.Context, h, w *Collection) ([]Change, error) {
	out := []Change{}
	hf := map[string]*Field{}
	for i := range h.Fields {
		hf[strings.ToLower(h.Fields[i].Name)] = &h.Fields[i]
	}
	wf := map[string]bool{}
	for i := range w.Fields {
		f := &w.Fields[i]
		wf[strings.ToLower(f.Name)] = true
		old := hf[strings.ToLower(f.Name)]
		if old == nil {
			out = append(out, Change{Op: "add_field", Collection: h.Name, Field: f.Name, To: f.Type})
			continue
		}
		if sameJSON(normField(*old), normField(*f)) {
			continue
		}
		c := Change{Op: "change_field", Collection: h.Name, Field: f.Name, From: normField(*old), To: normField(*f)}
		if old.Type != f.Type {
			n, err := m.count(ctx, "SELECT count(*) FROM "+quote(h.Name)+" WHERE "+quote(old.Name)+" IS NOT NULL", true)
			if err != nil {
				return nil, err
			}
			c.DataLoss, c.Lost = n > 0, n
		}
		out = append(out, c)
	}
	for _, f := range h.Fields {
		if wf[strings.ToLower(f.Name)] {
			continue
		}
		n, err := m.count(ctx, "SELECT count(*) FROM "+quote(h.Name)+" WHERE "+quote(f.Name)+" IS NOT NULL AND "+quote(f.Name)+" NOT IN ('', '[]')", true)
		if err != nil {
			return nil, err
		}
		out = append(out, Change{Op: "drop_field", Collection: h.Name, Field: f.Name, From: f.Type, DataLoss: n > 0, Lost: n})
	}
	return out, nil
}

// count runs a count(*) on the replica (0 when !run: views hold no data
// of their own).
func (m *Migrations) count(ctx context.Context, q string, run bool) (int64, error) {
	if !run {
		return 0, nil
	}
	var n int64
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error { return r.QueryRow(q).Scan(&n) })
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return n, nil
}

// anyTarget resolves every relation target to itself: snapshot fields are
// cleaned by their type's rules with their targets kept as names.
type anyTarget struct{}

func (anyTarget) Collection(name string) *schema.Collection {
	return &schema.Collection{ID: name, Name: name, Type: schema.TypeBase}
}

// normField is a field as the node would store it (options that do not
// apply to its type dropped), without id, for comparison.
func normField(f Field) Field {
	cp := f.Field
	cp.ID = ""
	schema.ValidateField(&cp, anyTarget{})
	return Field{cp}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func sameRule(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// ruleText shows a rule in a change: nil (admins only) as null.
func ruleText(r *string) any {
	if r == nil {
		return nil
	}
	return *r
}

func authOptions(o *schema.AuthOptions) *schema.AuthOptions {
	if o == nil {
		return schema.DefaultAuthOptions()
	}
	return o
}

func normQuery(q string) string { return strings.TrimSuffix(strings.TrimSpace(q), ";") }

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
