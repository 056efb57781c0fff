package engine

import (
	"sync"

	"svcd/engine/filter"
)

// parsedRules caches the parsed rules of one collection version: a Coll
// never changes once built and a parsed expression is read only, so a
// rule is parsed once per version instead of once per record checked
// (a batch of 100 creates under a create rule parsed it 100 times).
type parsedRules struct {
	mu sync.Mutex
	m  map[string]parsedRule
}

type parsedRule struct {
	expr filter.Expr
	err  error
}

// maxParsedRules bounds the cache; rules are a handful per collection.
const maxParsedRules = 64

// parseRule returns src parsed, from the cache when it was parsed before.
func (ci *Coll) parseRule(src string) (filter.Expr, error) {
	c := ci.parsed
	c.mu.Lock()
	r, ok := c.m[src]
	c.mu.Unlock()
	if ok {
		return r.expr, r.err
	}
	expr, err := filter.Parse(src)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxParsedRules {
		c.m = map[string]parsedRule{}
	}
	c.m[src] = parsedRule{expr, err}
	c.mu.Unlock()
	return expr, err
}
