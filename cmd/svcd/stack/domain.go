package stack

import (
	"svcd/engine"
	"svcd/engine/csv"
	"svcd/engine/history"
)

// Domain is the engine's core with every module wired to it: the one
// place that knows which modules make svcd. Each module registers its
// commands, migrations, settings and hooks on the core as it is built;
// the registries are sealed before anything is applied.
type Domain struct {
	Engine *engine.Engine
	// History keeps and serves record history.
	History *history.History
	// CSV exports and imports the records of base collections.
	CSV *csv.CSV
}

// NewDomain builds the core on opts.Store and wires the modules. Call it
// before the consensus layer applies any entry.
func NewDomain(opts engine.Options) (*Domain, error) {
	eng, err := engine.New(opts)
	if err != nil {
		return nil, err
	}
	d := &Domain{Engine: eng}
	d.History = history.New(eng)
	d.CSV = csv.New(eng)
	if err := eng.Seal(); err != nil {
		return nil, err
	}
	return d, nil
}
