package engine

import "strconv"

// listNear answers a vector search: the rows satisfying conds (rules,
// filter, search) are ranked by the search provider (near) and the best
// ones returned in one page, best first, each with "_score". sort, page
// and perPage do not apply.
func (rs *Records) listNear(src *readSource, ci *Coll, q ListQuery, near NearSearch, conds []string, args []any, deny bool) (*RecordList, error) {
	out := &RecordList{Page: 1, PerPage: near.Limit(), TotalItems: -1, TotalPages: -1, Vector: &VectorInfo{}}
	var ranked []Ranked
	if !deny {
		var info VectorInfo
		var err error
		if ranked, info, err = near.Rank(conds, args); err != nil {
			return nil, err
		}
		*out.Vector = info
	}
	if !q.SkipTotal {
		out.TotalItems = len(ranked)
		out.TotalPages = min(len(ranked), 1)
	}
	if len(ranked) == 0 {
		out.Data = []byte("[]")
		return out, nil
	}
	byID := make(map[string][]any, len(ranked))
	marks := make([]byte, 0, 2*len(ranked))
	ids := make([]any, len(ranked))
	for i, r := range ranked {
		if i > 0 {
			marks = append(marks, ',')
		}
		marks = append(marks, '?')
		ids[i] = r.ID
	}
	rows, err := src.query(false, "SELECT "+ci.selectCols+" FROM "+ci.table+" AS _r WHERE _r.id IN ("+string(marks)+")", ids...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		row, err := ci.scanRow(rows.Scan)
		if err != nil {
			rows.Close()
			return nil, err
		}
		id, _ := row[0].(string)
		byID[id] = row
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	page := make([][]any, 0, len(ranked))
	scores := make([]float64, 0, len(ranked))
	for _, r := range ranked {
		if row, ok := byID[r.ID]; ok {
			page = append(page, row)
			scores = append(scores, r.Score)
		}
	}
	exp, err := rs.expand(src, ci, page, q.Expand)
	if err != nil {
		return nil, err
	}
	proj := parseProjection(q.Fields)
	buf := make([]byte, 0, 256*len(page)+2)
	buf = append(buf, '[')
	var rec []byte
	for i, row := range page {
		if i > 0 {
			buf = append(buf, ',')
		}
		rec = appendScore(ci.appendRecordExpanded(rec[:0], row, src.bypass(ci), proj, exp[i]), scores[i])
		buf = append(buf, rec...)
	}
	out.Data = append(buf, ']')
	return out, nil
}

// appendScore adds "_score" to the rendered record rec (a JSON object).
func appendScore(rec []byte, score float64) []byte {
	rec = rec[:len(rec)-1]
	if len(rec) > 1 {
		rec = append(rec, ',')
	}
	rec = append(rec, `"_score":`...)
	rec = strconv.AppendFloat(rec, score, 'g', -1, 64)
	return append(rec, '}')
}
