package engine

import (
	"context"
	"math"
	"strings"

	"svcd/fsm"
)

// ListQuery holds the list parameters of SPEC.md.
type ListQuery struct {
	Page, PerPage int
	Sort          string
	Fields        string
	SkipTotal     bool
	// Unsupported names the list parameters given that are not supported
	// yet (filter, expand, cursor, search, nearVector...): a 400 says so.
	Unsupported []string
}

// RecordList is one page of records; Data is the JSON array.
type RecordList struct {
	Data       []byte
	Page       int
	PerPage    int
	TotalItems int
	TotalPages int
}

// Page-size limits.
const (
	DefaultPerPage = 30
	MaxPerPage     = 500
)

// UnsupportedListParams are the list parameters of SPEC.md that this
// version answers with 400 instead of ignoring.
var UnsupportedListParams = []string{"filter", "expand", "cursor", "search", "nearVector", "nearVectorField", "nearLimit", "nearMinScore"}

func (q *ListQuery) unsupported() *Error {
	if len(q.Unsupported) > 0 {
		return Errorf(KindBadRequest, "The %s parameter %s", q.Unsupported[0], errNotImplementedQ)
	}
	return nil
}

// orderBy builds the ORDER BY clause from a sort parameter: known columns
// only (unknown ones are ignored), `-` for descending, id as tiebreaker.
func (ci *collInfo) orderBy(sortParam string, admin bool) string {
	if strings.TrimSpace(sortParam) == "" {
		sortParam = ci.defaultSort
	}
	parts, lastDesc, hasID := ci.sortParts(sortParam, admin)
	if len(parts) == 0 {
		// Only unknown columns: fall back to the default order.
		parts, lastDesc, hasID = ci.sortParts(ci.defaultSort, admin)
	}
	if !hasID {
		if lastDesc {
			parts = append(parts, "id DESC")
		} else {
			parts = append(parts, "id ASC")
		}
	}
	return strings.Join(parts, ", ")
}

func (ci *collInfo) sortParts(sortParam string, admin bool) (parts []string, lastDesc, hasID bool) {
	for _, tok := range strings.Split(sortParam, ",") {
		tok = strings.TrimSpace(tok)
		desc := strings.HasPrefix(tok, "-")
		tok = strings.TrimLeft(tok, "+-")
		col := ci.sortColumn(tok, admin)
		if col == "" {
			continue
		}
		dir := " ASC"
		if desc {
			dir = " DESC"
		}
		parts = append(parts, col+dir)
		lastDesc = desc
		hasID = hasID || col == "id"
	}
	return parts, lastDesc, hasID
}

func (ci *collInfo) sortColumn(name string, admin bool) string {
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
		if f.Name == name && !f.private && (admin || !f.Hidden) {
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

// ListRecords reads one page of a collection from this replica.
func (e *Engine) ListRecords(ctx context.Context, p Principal, name string, q ListQuery) (*RecordList, error) {
	ci := e.collection(name)
	if ci == nil {
		return nil, errNotFound
	}
	if verr := q.unsupported(); verr != nil {
		return nil, verr
	}
	admin := p.IsAdmin()
	if q.Page < 1 {
		q.Page = 1
	}
	if q.PerPage < 1 {
		q.PerPage = DefaultPerPage
	}
	q.PerPage = min(q.PerPage, MaxPerPage)
	out := &RecordList{Page: q.Page, PerPage: q.PerPage, TotalItems: -1, TotalPages: -1}
	offset := int64(q.Page-1) * int64(q.PerPage)
	if q.Page > math.MaxInt32 || offset > math.MaxInt64/2 {
		offset = math.MaxInt64 / 2 // far past any table: an empty page
	}
	if !ruleAllows(ci.ViewRule, admin) {
		if ci.ViewRule == nil {
			return nil, errAdminOnly
		}
		// An expression rule admits no non-admin until rules are evaluated.
		out.Data = []byte("[]")
		if !q.SkipTotal {
			out.TotalItems, out.TotalPages = 0, 0
		}
		return out, nil
	}
	proj := parseProjection(q.Fields)
	query := "SELECT " + ci.selectCols + " FROM " + ci.table + " ORDER BY " + ci.orderBy(q.Sort, admin) + " LIMIT ? OFFSET ?"
	buf := make([]byte, 0, 256*q.PerPage)
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(query, q.PerPage, offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		buf = append(buf, '[')
		first := true
		for rows.Next() {
			row, err := ci.scanRow(rows.Scan)
			if err != nil {
				return err
			}
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = ci.appendRecord(buf, row, admin, proj)
		}
		buf = append(buf, ']')
		if err := rows.Err(); err != nil {
			return err
		}
		if q.SkipTotal {
			return nil
		}
		var total int
		if err := r.QueryRow("SELECT count(*) FROM " + ci.table).Scan(&total); err != nil {
			return err
		}
		out.TotalItems = total
		out.TotalPages = (total + q.PerPage - 1) / q.PerPage
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Data = buf
	return out, nil
}
