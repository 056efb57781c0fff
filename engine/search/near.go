package search

import (
	"strconv"
	"strings"

	"svcd/engine"
)

// nearQuery is a validated vector search of one list (engine.NearSearch).
type nearQuery struct {
	l        *engine.ListRead
	ci       *engine.Coll
	field    *engine.FieldInfo
	vec      []float32
	norm     float64 // of vec, computed once
	limit    int
	minScore float64
	hasMin   bool
	// maxCand is vector.max_candidates when the search was asked.
	maxCand int
}

// NearVector validates the vector search of q on ci for the reader of l
// (engine.Searcher).
func (s *Search) NearVector(l *engine.ListRead, ci *engine.Coll, q *engine.ListQuery) (engine.NearSearch, error) {
	nq, err := parseNear(ci, q, l.Bypass(ci))
	if err != nil {
		return nil, err
	}
	nq.l, nq.ci, nq.maxCand = l, ci, s.maxCandidates()
	return nq, nil
}

// Limit is nearLimit.
func (nq *nearQuery) Limit() int { return nq.limit }

// Rank scans at most vector.max_candidates rows satisfying conds and
// keeps the best (engine.NearSearch).
func (nq *nearQuery) Rank(conds []string, args []any) ([]engine.Ranked, engine.VectorInfo, error) {
	top, info, err := vectorScan(nq.l, nq.ci, conds, args, nq, nq.maxCand)
	if err != nil {
		return nil, info, err
	}
	out := make([]engine.Ranked, len(top))
	for i, r := range top {
		out[i] = engine.Ranked{ID: r.id, Score: r.score}
	}
	return out, info, nil
}

// maxCandidates reads vector.max_candidates (a positive integer, else the
// default).
func (s *Search) maxCandidates() int {
	if n, err := strconv.Atoi(strings.TrimSpace(s.core.Setting("vector.max_candidates"))); err == nil && n > 0 {
		return n
	}
	return defaultMaxCandidates
}
