package engine

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"

	"svcd/engine/filter"
	"svcd/fsm"
)

// readEnv is the context of a read on this replica now. For the view rule
// (written by admins) hidden fields and every collection are readable; for
// a caller's own filter only what the caller may read (Principal.filterEnv).
func (rs *Records) readEnv(p Principal, forRule bool) *filter.Env {
	env := &filter.Env{
		Now: rs.e.now().UTC(), Method: p.Request.Method, Context: p.Request.Context, Auth: authFields(p),
		Headers: p.Request.Headers, Query: p.Request.Query, AllowHidden: forRule,
		AuthField: rs.e.schema.Load().authField,
	}
	if forRule {
		return env
	}
	return p.filterEnv(env)
}

// readCond is the WHERE condition a read of ci from src must satisfy: the
// view rule, unless the reader bypasses rules on ci. An invalid rule admits
// nothing (deny); a collection out of the reader's reach is
// ErrInsufficientScope.
func readCond(src *readSource, ci *Coll) (conds []string, args []any, deny bool, err error) {
	if !src.reaches(ci) {
		return nil, nil, false, ErrInsufficientScope
	}
	if !src.bypass(ci) {
		if ci.ViewRule == nil {
			return nil, nil, false, ErrAdminOnly
		}
		cond, all, none := ruleSQL(ci, ci.ViewRule, false, src.res, src.env(true), nil)
		switch {
		case none:
			return nil, nil, true, nil
		case !all:
			conds, args = append(conds, cond.Where), cond.Args
		}
	}
	return conds, args, false, nil
}

// withFilter adds the reader's own filter to conds. A filter that does not
// parse or compile is dropped, as SPEC.md wants (the list answers every
// row the view rule admits), and problem says why, for the caller to be
// told ("unknown field \"titel\" at offset 0").
func withFilter(src *readSource, ci *Coll, filterText string, conds []string, args []any) ([]string, []any, string) {
	if strings.TrimSpace(filterText) == "" {
		return conds, args, ""
	}
	ex, err := filter.Parse(filterText)
	if err != nil {
		return conds, args, filterProblem(err)
	}
	c, err := filter.CompileSQL(ex, ci.filterColl(), src.res, src.env(false), "_r", args...)
	if err != nil {
		return conds, args, filterProblem(err)
	}
	return append(conds, c.Where), c.Args, ""
}

func whereClause(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// GetRecord reads one record from this replica; fields, when not empty,
// projects it like a list's fields parameter; expand expands relations.
func (rs *Records) GetRecord(ctx context.Context, p Principal, name, id, fields, expand string) (*Record, error) {
	ci := rs.e.Coll(name)
	if ci == nil {
		return nil, ErrNotFound
	}
	var rec *Record
	err := rs.e.store.View(ctx, func(r *fsm.Reader) error {
		var err error
		rec, err = rs.getRecordIn(rs.e.replicaSource(r, p), ci, id, fields, expand)
		return err
	})
	return rec, err
}

// getRecordIn reads record id of ci from src.
func (rs *Records) getRecordIn(src *readSource, ci *Coll, id, fields, expand string) (*Record, error) {
	conds, args, deny, err := readCond(src, ci)
	if err != nil {
		return nil, err
	}
	if deny {
		return nil, ErrNotFound
	}
	conds = append(conds, "_r.id = ?")
	args = append(args, id)
	row, err := ci.scanRow(src.queryRow("SELECT "+ci.selectCols+" FROM "+ci.table+" AS _r"+whereClause(conds), args...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	exp, err := rs.expand(src, ci, [][]any{row}, expand)
	if err != nil {
		return nil, err
	}
	rec := &Record{ETag: rs.e.etag(ci, row)}
	rec.JSON = ci.appendRecordExpanded(make([]byte, 0, 256), row, src.bypass(ci), parseProjection(fields), exp[0])
	return rec, nil
}

// ListRecords reads one page of a collection from this replica.
func (rs *Records) ListRecords(ctx context.Context, p Principal, name string, q ListQuery) (*RecordList, error) {
	ci := rs.e.Coll(name)
	if ci == nil {
		return nil, ErrNotFound
	}
	var out *RecordList
	err := rs.e.store.View(ctx, func(r *fsm.Reader) error {
		var err error
		out, err = rs.listRecordsIn(rs.e.replicaSource(r, p), ci, q)
		return err
	})
	return out, err
}

// listRecordsIn reads one page of ci from src.
func (rs *Records) listRecordsIn(src *readSource, ci *Coll, q ListQuery) (*RecordList, error) {
	admin := src.bypass(ci)
	if q.Page < 1 || q.CursorMode {
		q.Page = 1
	}
	if q.PerPage < 1 {
		q.PerPage = DefaultPerPage
	}
	q.PerPage = min(q.PerPage, MaxPerPage)
	out := &RecordList{Page: q.Page, PerPage: q.PerPage, TotalItems: -1, TotalPages: -1, CursorMode: q.CursorMode}
	offset := int64(q.Page-1) * int64(q.PerPage)
	if q.Page > math.MaxInt32 || offset > math.MaxInt64/2 {
		offset = math.MaxInt64 / 2 // far past any table: an empty page
	}
	conds, args, deny, err := readCond(src, ci)
	if err != nil {
		return nil, err
	}
	conds, args, out.FilterProblem = withFilter(src, ci, q.Filter, conds, args)
	if !q.HasNear {
		out.SortProblem = ci.sortProblem(q.Sort, admin) // a vector search orders by score
	}
	s, err := rs.e.searcherFor(&q)
	if err != nil {
		return nil, err
	}
	l := &ListRead{src: src}
	var near NearSearch
	if q.HasNear {
		// After the rule check: a caller refused the collection learns
		// nothing of its fields.
		if near, err = s.NearVector(l, ci, &q); err != nil {
			return nil, err
		}
	}
	searchTotal := -1 // the count of matches, when it is the total
	if !deny && strings.TrimSpace(q.Search) != "" {
		byCreated := strings.HasPrefix(ci.orderBy(q.Sort, admin), "created ")
		sc, err := s.SearchCond(l, ci, q.Search, byCreated)
		if err != nil {
			return nil, err
		}
		if len(conds) == 0 && sc.Total >= 0 {
			searchTotal = sc.Total
		}
		deny = sc.None
		if !deny {
			conds, args = append(conds, sc.Where), append(args, sc.Args...)
		}
	}
	if near != nil {
		list, err := rs.listNear(src, ci, q, near, conds, args, deny)
		if list != nil {
			list.FilterProblem = out.FilterProblem
		}
		return list, err
	}
	if deny {
		out.Data = []byte("[]")
		if !q.SkipTotal {
			out.TotalItems, out.TotalPages = 0, 0
		}
		return out, nil
	}
	countConds, countArgs := conds, args
	order := ci.orderBy(q.Sort, admin)
	var key *cursorKey
	if q.CursorMode {
		if key, err = ci.cursorKey(q.Sort, admin); err != nil {
			return nil, err
		}
		order = key.orderBy()
		if q.Cursor != "" {
			cond, cargs, err := key.after(q.Cursor)
			if err != nil {
				return nil, err
			}
			conds, args = append(append([]string(nil), conds...), cond), append(append([]any(nil), args...), cargs...)
		}
		offset = 0
	}
	proj := parseProjection(q.Fields)
	limit := q.PerPage
	if q.CursorMode {
		limit++ // one more row tells whether a next page exists
	}
	query := "SELECT " + ci.selectCols + " FROM " + ci.table + " AS _r" + whereClause(conds) + " ORDER BY " + order + " LIMIT ? OFFSET ?"
	rows, err := src.query(true, query, append(args, limit, offset)...)
	if err != nil {
		return nil, err
	}
	var page [][]any
	for rows.Next() {
		row, err := ci.scanRow(rows.Scan)
		if err != nil {
			rows.Close()
			return nil, err
		}
		page = append(page, row)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if q.CursorMode && len(page) > q.PerPage {
		page = page[:q.PerPage]
		out.NextCursor = key.token(page[len(page)-1])
	}
	exp, err := rs.expand(src, ci, page, q.Expand)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 256*len(page)+2)
	buf = append(buf, '[')
	for i, row := range page {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = ci.appendRecordExpanded(buf, row, admin, proj, exp[i])
	}
	out.Data = append(buf, ']')
	if q.SkipTotal {
		return out, nil
	}
	if searchTotal >= 0 {
		out.TotalItems = searchTotal
		out.TotalPages = (searchTotal + q.PerPage - 1) / q.PerPage
		return out, nil
	}
	var total int
	if err := src.queryRow("SELECT count(*) FROM "+ci.table+" AS _r"+whereClause(countConds), countArgs...).Scan(&total); err != nil {
		return nil, err
	}
	out.TotalItems = total
	out.TotalPages = (total + q.PerPage - 1) / q.PerPage
	return out, nil
}
