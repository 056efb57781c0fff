package search

import (
	"database/sql"
	"encoding/binary"
	"math"
	"strings"

	"svcd/engine"
)

// scored is one ranked record: its cosine similarity and id.
type scored struct {
	score float64
	id    string
}

// worse orders the top-k heap: the lower score, then the larger id, is
// worse, so results are by score descending, id ascending on ties.
func (a scored) worse(b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

// topK keeps the k best scores seen: a min-heap on worse, the root being
// the one to evict.
type topK struct {
	k int
	h []scored
}

// wants reports whether a record with score s and id would enter the
// heap; the caller copies the id only then.
func (t *topK) wants(s float64, id []byte) bool {
	if len(t.h) < t.k {
		return true
	}
	r := t.h[0]
	if s != r.score {
		return s > r.score
	}
	return string(id) < r.id
}

func (t *topK) push(e scored) {
	if len(t.h) < t.k {
		t.h = append(t.h, e)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.h[i].worse(t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	t.h[0] = e
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(t.h) && t.h[l].worse(t.h[m]) {
			m = l
		}
		if r := l + 1; r < len(t.h) && t.h[r].worse(t.h[m]) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted empties the heap into best-first order.
func (t *topK) sorted() []scored {
	out := append([]scored(nil), t.h...)
	// k is at most 1000: an insertion sort is enough and allocation-free.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1].worse(out[j]); j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// cosineBlob is the cosine similarity of q (norm qn) and a stored float32
// BLOB of the same length; ok is false for another length or a zero vector.
// It decodes in place: no allocation.
func cosineBlob(q []float32, qn float64, b []byte) (float64, bool) {
	if len(b) != 4*len(q) {
		return 0, false
	}
	var dot, vv float32
	for i, x := range q {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		dot += x * v
		vv += v * v
	}
	if vv == 0 {
		return 0, false
	}
	return float64(dot) / (qn * math.Sqrt(float64(vv))), true
}

// cosineVec is cosineBlob for a decoded vector.
func cosineVec(q []float32, qn float64, v []float32) (float64, bool) {
	if len(v) != len(q) {
		return 0, false
	}
	var dot, vv float32
	for i, x := range q {
		dot += x * v[i]
		vv += v[i] * v[i]
	}
	if vv == 0 {
		return 0, false
	}
	return float64(dot) / (qn * math.Sqrt(float64(vv))), true
}

// vectorScan ranks the rows of ci that satisfy conds (rules, filter,
// search): at most maxCand rows with a value in the field are read, in
// table order, and the nq.limit best at or above nq.minScore are kept.
func vectorScan(l *engine.ListRead, ci *engine.Coll, conds []string, args []any, nq *nearQuery, maxCand int) ([]scored, engine.VectorInfo, error) {
	col := "_r." + nq.field.Column()
	conds = append(append([]string(nil), conds...), col+" IS NOT NULL")
	q := "SELECT _r.id, " + col + ", typeof(" + col + ") = 'text' FROM " + ci.Table() + " AS _r" + whereClause(conds) + " LIMIT ?"
	rows, err := l.Query(q, append(append([]any(nil), args...), maxCand)...)
	if err != nil {
		return nil, engine.VectorInfo{}, err
	}
	defer rows.Close()
	var info engine.VectorInfo
	top := &topK{k: nq.limit, h: make([]scored, 0, nq.limit)}
	consider := func(id []byte, s float64, ok bool) {
		if ok && (!nq.hasMin || s >= nq.minScore) && top.wants(s, id) {
			top.push(scored{score: s, id: string(id)})
		}
	}
	if sr, isSQL := rows.(*sql.Rows); isSQL {
		// The replica's rows: RawBytes points into SQLite's buffers,
		// so a row costs no allocation.
		var id, vec sql.RawBytes
		var isText int64
		for sr.Next() {
			if err := sr.Scan(&id, &vec, &isText); err != nil {
				return nil, info, err
			}
			info.Scanned++
			if isText != 0 {
				v, ok := storedVectorText(string(vec))
				s, ok2 := cosineVec(nq.vec, nq.norm, v)
				consider(id, s, ok && ok2)
				continue
			}
			s, ok := cosineBlob(nq.vec, nq.norm, vec)
			consider(id, s, ok)
		}
	} else {
		var id string
		var vec any
		var isText int64
		for rows.Next() {
			if err := rows.Scan(&id, &vec, &isText); err != nil {
				return nil, info, err
			}
			info.Scanned++
			switch v := vec.(type) {
			case []byte:
				s, ok := cosineBlob(nq.vec, nq.norm, v)
				consider([]byte(id), s, ok)
			case string:
				d, ok := storedVectorText(v)
				s, ok2 := cosineVec(nq.vec, nq.norm, d)
				consider([]byte(id), s, ok && ok2)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, info, err
	}
	info.Truncated = info.Scanned >= maxCand
	return top.sorted(), info, nil
}

// storedVectorText decodes a vector kept as JSON text (after a field
// type change).
func storedVectorText(s string) ([]float32, bool) {
	v, err := ParseNearVector(s)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(s), "[") {
		return nil, false
	}
	return v, true
}
