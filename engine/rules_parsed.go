package engine

import "svcd/engine/filter"

// parsedRule is a rule's text parsed, or why it does not parse.
type parsedRule struct {
	expr filter.Expr
	err  error
}

// parseRules parses the collection's rules once, when its version is
// loaded: a Coll never changes and a parsed expression is read only, so
// rule checks (every record of a batch, every realtime delivery) look the
// parse up instead of parsing again. The map is never written after.
func parseRules(c *Coll) map[string]parsedRule {
	m := map[string]parsedRule{}
	for _, r := range []*string{c.ViewRule, c.CreateRule, c.UpdateRule, c.DeleteRule} {
		if r == nil {
			continue
		}
		if _, ok := m[*r]; !ok {
			expr, err := filter.Parse(*r)
			m[*r] = parsedRule{expr, err}
		}
	}
	return m
}

// parseRule returns src parsed: from the collection's parsed rules when
// it is one of them, else parsed now.
func (ci *Coll) parseRule(src string) (filter.Expr, error) {
	if r, ok := ci.parsed[src]; ok {
		return r.expr, r.err
	}
	return filter.Parse(src)
}
