package engine

import (
	"strconv"
	"strings"
)

// ListQuery holds the list parameters of SPEC.md.
type ListQuery struct {
	Page, PerPage int
	Sort          string
	Fields        string
	SkipTotal     bool
	Filter        string
	Expand        string
	// CursorMode is set when the cursor parameter is present (empty: the
	// first page of a keyset walk).
	CursorMode bool
	Cursor     string
	// Search is the full-text query (empty: none).
	Search string
	// HasNear is set when nearVector is present: a vector search, with
	// the raw nearVector, nearVectorField, nearLimit and nearMinScore
	// (validated by the search provider: 422 when wrong).
	HasNear                                              bool
	NearVector, NearVectorField, NearLimit, NearMinScore string
}

// RecordList is one page of records; Data is the JSON array.
type RecordList struct {
	Data       []byte
	Page       int
	PerPage    int
	TotalItems int
	TotalPages int
	// NextCursor is set in cursor mode: the token of the next page, or ""
	// when this page is the last.
	NextCursor string
	CursorMode bool
	// Vector is set for a vector search: the _vector member.
	Vector *VectorInfo
	// FilterProblem says why the filter was dropped ("" when it applied
	// or there was none); SortProblem names the sort terms ignored.
	FilterProblem, SortProblem string
}

// Page-size limits.
const (
	DefaultPerPage = 30
	MaxPerPage     = 500
)

// unsupportedInBatch refuses search and vector search in a batch list:
// they are answered by single list requests.
func (q *ListQuery) unsupportedInBatch() *Error {
	switch {
	case q.Search != "":
		return Errorf(KindBadRequest, "The search parameter is not supported in a batch")
	case q.HasNear:
		return Errorf(KindBadRequest, "The nearVector parameter is not supported in a batch")
	}
	return nil
}

// orderBy builds the ORDER BY clause from a sort parameter: known columns
// only (unknown ones are ignored), `-` for descending, id as tiebreaker.
func (ci *Coll) orderBy(sortParam string, admin bool) string {
	if strings.TrimSpace(sortParam) == "" {
		sortParam = ci.defaultSort
	}
	keys := ci.sortKeys(sortParam, admin)
	if len(keys) == 0 {
		// Only unknown columns: fall back to the default order.
		keys = ci.sortKeys(ci.defaultSort, true)
	}
	parts := make([]string, 0, len(keys)+1)
	hasID := false
	for _, k := range keys {
		dir := " ASC"
		if k.desc {
			dir = " DESC"
		}
		parts = append(parts, k.col+dir)
		hasID = hasID || k.col == "id"
	}
	if !hasID {
		if keys[len(keys)-1].desc {
			parts = append(parts, "id DESC")
		} else {
			parts = append(parts, "id ASC")
		}
	}
	return strings.Join(parts, ", ")
}

// sortKey is one resolved term of a sort parameter.
type sortKey struct {
	name, col string
	desc      bool
}

// sortKeys resolves a sort parameter ("-created,title") to known columns;
// unknown or unreadable names are dropped. Lists and keyset walks share it.
// A column named twice counts once (its first direction): a later term
// on the same column cannot change the order. At most maxSortKeys terms
// are kept.
func (ci *Coll) sortKeys(sortParam string, admin bool) []sortKey {
	var keys []sortKey
	for _, tok := range strings.Split(sortParam, ",") {
		tok = strings.TrimSpace(tok)
		desc := strings.HasPrefix(tok, "-")
		name := strings.TrimLeft(tok, "+-")
		col := ci.sortColumn(name, admin)
		if col == "" || hasSortCol(keys, col) {
			continue
		}
		keys = append(keys, sortKey{name: name, col: col, desc: desc})
		if len(keys) == maxSortKeys {
			break
		}
	}
	return keys
}

// sortProblem names the terms of a sort parameter that sortKeys ignores
// because no readable column has that name ("unknown sort field
// \"titel\""); "" when every term names one. A column named twice is not a
// problem: its first direction holds.
func (ci *Coll) sortProblem(sortParam string, admin bool) string {
	var unknown []string
	for _, tok := range strings.Split(sortParam, ",") {
		name := strings.TrimLeft(strings.TrimSpace(tok), "+-")
		if name != "" && ci.sortColumn(name, admin) == "" {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	switch len(unknown) {
	case 0:
		return ""
	case 1:
		return "unknown sort field " + unknown[0]
	}
	return "unknown sort fields " + strings.Join(unknown, ", ")
}

// maxSortKeys bounds the columns of one ORDER BY.
const maxSortKeys = 16

func hasSortCol(keys []sortKey, col string) bool {
	for _, k := range keys {
		if k.col == col {
			return true
		}
	}
	return false
}

func (ci *Coll) sortColumn(name string, admin bool) string {
	switch name {
	case "id":
		return "id"
	case "created":
		if ci.hasCreated {
			return "created"
		}
		return ""
	case "updated":
		if ci.hasUpdated {
			return "updated"
		}
		return ""
	}
	for _, f := range ci.fields {
		if f.Name == name && !f.private && !f.Encrypted && (admin || !f.Hidden) {
			return f.col
		}
	}
	return ""
}

// ParseProjection turns a fields parameter into a projection (nil keeps
// every field; id is always kept).
func parseProjection(fields string) projection {
	if strings.TrimSpace(fields) == "" {
		return nil
	}
	p := projection{"id": true}
	for _, f := range strings.Split(fields, ",") {
		if f = strings.TrimSpace(f); f != "" {
			p[f] = true
		}
	}
	return p
}
