package jsvm

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// codeSet is the committed hooks and routes as this replica holds them,
// rebuilt after every command that changed them (and after a restore or
// a migration), before the command's index is published: a request
// released by that index runs the new code.
type codeSet struct {
	hooks  []*Hook
	routes []*Route
	// byKey holds the enabled hooks of one collection (or "*") and event,
	// in order.
	byKey map[hookKey][]*Hook
	// served are the enabled routes, most specific first.
	served []*Route
}

type hookKey struct{ collection, event string }

func emptySet() *codeSet { return &codeSet{byKey: map[hookKey][]*Hook{}} }

// hooksFor are the enabled hooks of event for collection name: those of
// the collection, then those of every collection ("*"), each in order.
func (s *codeSet) hooksFor(name, event string) []*Hook {
	own, all := s.byKey[hookKey{name, event}], s.byKey[hookKey{AllCollections, event}]
	if len(all) == 0 {
		return own
	}
	if len(own) == 0 {
		return all
	}
	return append(slices.Clip(own), all...)
}

// route finds the route serving method and path (segments without the
// /api/v1/custom/ prefix).
func (s *codeSet) route(method string, segs []string) (*Route, map[string]any) {
	var anyMethod *Route
	var anyParams map[string]any
	for _, r := range s.served {
		if r.Method != method && r.Method != AnyMethod {
			continue
		}
		params, ok := r.parsed.match(segs)
		if !ok {
			continue
		}
		if r.Method == method {
			return r, params
		}
		if anyMethod == nil {
			anyMethod, anyParams = r, params
		}
	}
	return anyMethod, anyParams
}

// onEvents reloads the set when hooks or routes changed.
func (m *Module) onEvents(evs []fsm.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case evHooks, evRoutes, fsm.KindRestore, engine.EvMigrate:
			if err := m.reload(context.Background()); err != nil {
				m.log.Error("jsvm: reload hooks and routes", "err", err)
			}
			return
		}
	}
}

// reload reads both tables (nothing before the module's migration).
func (m *Module) reload(ctx context.Context) error {
	if m.core.InternalVersion() < schemaVersion {
		m.set.Store(emptySet())
		return nil
	}
	s := emptySet()
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT id, collection, event, code, enabled, ord, created, updated FROM _svc_hooks`)
		if err != nil {
			return err
		}
		for rows.Next() {
			h := &Hook{}
			if err := rows.Scan(&h.ID, &h.Collection, &h.Event, &h.Code, &h.Enabled, &h.Order, &h.Created, &h.Updated); err != nil {
				rows.Close()
				return err
			}
			s.hooks = append(s.hooks, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = r.Query(`SELECT id, method, path, code, enabled, created, updated FROM _svc_routes`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			rt := &Route{}
			if err := rows.Scan(&rt.ID, &rt.Method, &rt.Path, &rt.Code, &rt.Enabled, &rt.Created, &rt.Updated); err != nil {
				return err
			}
			rt.parsed, _, rt.pattern, _ = parsePath(rt.Path)
			s.routes = append(s.routes, rt)
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	s.index()
	m.set.Store(s)
	return nil
}

// index sorts the lists and builds the lookups.
func (s *codeSet) index() {
	slices.SortFunc(s.hooks, func(a, b *Hook) int {
		return cmp.Or(strings.Compare(a.Collection, b.Collection), strings.Compare(a.Event, b.Event),
			cmp.Compare(a.Order, b.Order), strings.Compare(a.ID, b.ID))
	})
	for _, h := range s.hooks {
		if h.Enabled {
			k := hookKey{h.Collection, h.Event}
			s.byKey[k] = append(s.byKey[k], h)
		}
	}
	slices.SortFunc(s.routes, func(a, b *Route) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Method, b.Method), strings.Compare(a.ID, b.ID))
	})
	for _, r := range s.routes {
		if r.Enabled {
			s.served = append(s.served, r)
		}
	}
	slices.SortStableFunc(s.served, func(a, b *Route) int { return specificity(a.parsed, b.parsed) })
}
