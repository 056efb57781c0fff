package search

import (
	"fmt"
	"strings"
	"unicode"

	"svcd/engine"
)

// MaxSearchTerms is how many terms of a search are used (SPEC.md limits):
// terms past the 32nd are ignored, as a malformed filter is.
const MaxSearchTerms = 32

// SearchTerms splits a search query into at most MaxSearchTerms terms at
// Unicode white space and control characters (a NUL would end the FTS5
// string early). A term without any letter or digit (only punctuation)
// can match no token and is dropped.
func SearchTerms(q string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(q, isTermSeparator) {
		if len(out) == MaxSearchTerms {
			break
		}
		if strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			out = append(out, t)
		}
	}
	return out
}

func isTermSeparator(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// ftsMatch is the FTS5 query of terms: each a quoted string (a double
// quote doubled), AND-combined, so nothing the user types is FTS syntax.
// The match is restricted to the index columns cols.
func ftsMatch(terms []string, cols []string) string {
	var b strings.Builder
	b.WriteString("{" + strings.Join(cols, " ") + "} : (")
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteByte(')')
	return b.String()
}

// searchScanMatches is how many matches make a search page cheaper by
// walking the created index and testing each record against the matches
// than by fetching every match and sorting (measured at 1M records: about
// 4 µs per fetched match against about 70 ms for the walk).
const searchScanMatches = 20000

// none is the search nothing can match (no searchable field the caller
// may read, no usable term, or no match at all).
func none() *engine.SearchCond { return &engine.SearchCond{None: true} }

// SearchCond builds the search of q on ci (engine.Searcher): the record
// is in the index and matches every term. Hidden searchable fields are
// matched for admins only. byCreated says the list is ordered by created
// (its index), which decides the plan for searches with many matches.
// The total is the count of indexed records matching.
func (s *Search) SearchCond(l *engine.ListRead, ci *engine.Coll, q string, byCreated bool) (*engine.SearchCond, error) {
	terms := SearchTerms(q)
	sf := searchFields(ci)
	if len(terms) == 0 || len(sf) == 0 {
		return none(), nil
	}
	fields := ci.RowFields()
	var cols []string
	for n, i := range sf {
		if l.Bypass(ci) || !fields[i].Hidden {
			cols = append(cols, fmt.Sprintf("c%d", n))
		}
	}
	if len(cols) == 0 {
		return none(), nil
	}
	var n int
	if err := l.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, "_svc_ftsid_"+ci.ID).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		// Made searchable before this version: no index until the
		// collection's next schema change.
		return none(), nil
	}
	fts, match := ftsTable(ci.ID), ftsMatch(terms, cols)
	var matches int
	if err := l.QueryRow("SELECT count(*) FROM "+fts+" WHERE "+fts+" MATCH ?", match).Scan(&matches); err != nil {
		return nil, err
	}
	if matches == 0 {
		return none(), nil
	}
	// "+" keeps SQLite from driving the query by the id list (one random
	// row fetch per match, then a sort); it walks the order's index and
	// probes the list instead.
	in := "_r.id IN "
	if byCreated && matches > searchScanMatches {
		in = "+_r.id IN "
	}
	return &engine.SearchCond{
		Where: in + "(SELECT id FROM " + ftsIDTable(ci.ID) + " WHERE rid IN (SELECT rowid FROM " + fts + " WHERE " + fts + " MATCH ?))",
		Args:  []any{match},
		Total: matches,
	}, nil
}
