package stack

import (
	"svcd/engine"
	"svcd/engine/history"
	"svcd/engine/search"
)

// Domain is the engine's core with every module wired to it: the one
// place that knows which modules make svcd. Each module registers its
// commands, migrations, settings and hooks on the core as it is built;
// the registries are sealed before anything is applied.
type Domain struct {
	Engine *engine.Engine
	// Search keeps the full-text index and answers the search and
	// vector search of record lists.
	Search *search.Search
	// History keeps and serves record history.
	History *history.History
}

// NewDomain builds the core on opts.Store and wires the modules. Call it
// before the consensus layer applies any entry.
func NewDomain(opts engine.Options) (*Domain, error) {
	eng, err := engine.New(opts)
	if err != nil {
		return nil, err
	}
	d := &Domain{Engine: eng}
	// Search before history: their record hooks run in this order, as
	// they did when search was part of the core.
	d.Search = search.New(eng)
	d.History = history.New(eng)
	if err := eng.Seal(); err != nil {
		return nil, err
	}
	return d, nil
}
