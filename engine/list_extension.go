package engine

import "strings"

// A record list delegates two parameters to a search provider, which a
// module (engine/search) registers at wiring time with SetSearcher: the
// full-text query (search=) becomes one more condition of the list, and a
// vector search (nearVector) ranks the records the list's conditions
// admit, which the core then renders. A core without a provider refuses
// both parameters (400): a list never pretends to search.

// Searcher is what a record list needs from a search provider.
type Searcher interface {
	// SearchCond is the condition the full-text query q (not blank) adds
	// to a list of ci read through l. byCreated says the list is ordered
	// by created first, which may decide the plan.
	SearchCond(l *ListRead, ci *Coll, q string, byCreated bool) (*SearchCond, error)
	// NearVector validates the vector search parameters of q (nearVector,
	// nearVectorField, nearLimit, nearMinScore; every mistake a
	// validation error) against ci as l's reader sees it. It is asked
	// after the rule check, so a caller refused the collection learns
	// nothing of its fields.
	NearVector(l *ListRead, ci *Coll, q *ListQuery) (NearSearch, error)
}

// SearchCond is the condition of a full-text query on the record table
// (aliased _r), ANDed with the list's other conditions.
type SearchCond struct {
	Where string
	Args  []any
	// None is set when nothing can match (Where is then unused).
	None bool
	// Total is the exact number of records matching, before the list's
	// rules and filter (the list's total when nothing else narrows it);
	// -1 when the provider does not know it.
	Total int
}

// NearSearch is a validated vector search of one list.
type NearSearch interface {
	// Limit is the most records the answer holds (nearLimit).
	Limit() int
	// Rank ranks the records satisfying conds (the list's rules, filter
	// and search on the record table aliased _r) by similarity, best
	// first, at most Limit of them.
	Rank(conds []string, args []any) ([]Ranked, VectorInfo, error)
}

// Ranked is one record of a vector search: its id and similarity score.
type Ranked struct {
	ID    string
	Score float64
}

// VectorInfo is the _vector member of a vector search answer: how many
// candidate rows were scanned and whether the scan stopped at the cap.
type VectorInfo struct {
	Scanned   int
	Truncated bool
}

// SetSearcher registers the search provider of record lists (one at
// most).
func (e *Engine) SetSearcher(s Searcher) {
	e.reg.mustOpen("searcher")
	if e.reg.searcher != nil {
		panic("engine: searcher registered twice")
	}
	e.reg.searcher = s
}

var (
	errSearchUnsupported = Errorf(KindBadRequest, "The search parameter is not supported by this server")
	errNearUnsupported   = Errorf(KindBadRequest, "The nearVector parameter is not supported by this server")
)

// searcherFor is the search provider of a list with q's parameters: nil
// when it has neither a search nor a vector search, an error when it has
// one and no provider is registered.
func (e *Engine) searcherFor(q *ListQuery) (Searcher, error) {
	s := e.reg.searcher
	switch {
	case s != nil:
		return s, nil
	case strings.TrimSpace(q.Search) != "":
		return nil, errSearchUnsupported
	case q.HasNear:
		return nil, errNearUnsupported
	}
	return nil, nil
}
