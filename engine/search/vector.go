package search

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
)

// Vector search limits (SPEC.md): nearLimit 1-1000, default 10; at most
// vector.max_candidates rows are scanned (default 100000).
const (
	DefaultNearLimit     = 10
	MaxNearLimit         = 1000
	defaultMaxCandidates = 100000
	maxVectorLen         = 4096 // the largest dimensions a field may have
)

var errNearVector = engine.FieldError("nearVector", "must be a JSON array or a comma-separated list of numbers")

// ParseNearVector reads a nearVector parameter: a JSON array of numbers
// ("[0.1, 2]") or a comma list ("0.1,2"). Every element must be a finite
// number within float32 range; at most 4096 elements.
func ParseNearVector(s string) ([]float32, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errNearVector
	}
	var parts []string
	if strings.HasPrefix(s, "[") {
		var raw []json.RawMessage
		if err := decodeStrict([]byte(s), &raw); err != nil {
			return nil, errNearVector
		}
		parts = make([]string, len(raw))
		for i, r := range raw {
			parts[i] = string(r)
		}
	} else {
		parts = strings.Split(s, ",")
	}
	if len(parts) == 0 || len(parts) > maxVectorLen {
		return nil, errNearVector
	}
	vec := make([]float32, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || !isNumberText(p) {
			return nil, errNearVector
		}
		f, err := strconv.ParseFloat(p, 64)
		// Anything that rounds to a finite float32 is taken.
		if err != nil || math.IsNaN(f) || math.IsInf(float64(float32(f)), 0) {
			return nil, errNearVector
		}
		vec[i] = float32(f)
	}
	return vec, nil
}

// isNumberText accepts decimal numbers only: ParseFloat alone would also
// take "NaN", "Inf", hex floats and underscores.
func isNumberText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}

// vectorFieldsFor lists the vector fields of ci the caller may read.
func vectorFieldsFor(ci *engine.Coll, admin bool) []*engine.FieldInfo {
	var out []*engine.FieldInfo
	for _, f := range ci.RowFields() {
		if f.Type == schema.FieldVector && !f.Private() && (admin || !f.Hidden) {
			out = append(out, f)
		}
	}
	return out
}

// parseNear validates the vector search parameters of q against ci. The
// field is nearVectorField or, when that is empty, the collection's only
// vector field (the caller can read); every mistake is a 422.
func parseNear(ci *engine.Coll, q *engine.ListQuery, admin bool) (*nearQuery, error) {
	nq := &nearQuery{limit: DefaultNearLimit}
	fields := vectorFieldsFor(ci, admin)
	if name := strings.TrimSpace(q.NearVectorField); name != "" {
		for _, f := range fields {
			if f.Name == name {
				nq.field = f
			}
		}
		if nq.field == nil {
			return nil, engine.FieldError("nearVectorField", "is not a vector field of this collection")
		}
	} else {
		switch len(fields) {
		case 1:
			nq.field = fields[0]
		case 0:
			return nil, engine.FieldError("nearVectorField", "the collection has no vector field")
		default:
			return nil, engine.FieldError("nearVectorField", "is required: the collection has several vector fields")
		}
	}
	if q.CursorMode {
		return nil, engine.FieldError("cursor", "cannot be combined with nearVector")
	}
	vec, err := ParseNearVector(q.NearVector)
	if err != nil {
		return nil, err
	}
	if nq.field.Dimensions > 0 && len(vec) != nq.field.Dimensions {
		return nil, engine.FieldError("nearVector", "must have "+strconv.Itoa(nq.field.Dimensions)+" numbers (the field's dimensions)")
	}
	var sum float64
	for _, v := range vec {
		sum += float64(v) * float64(v)
	}
	if sum == 0 {
		return nil, engine.FieldError("nearVector", "must not be the zero vector (cosine similarity is undefined)")
	}
	nq.vec, nq.norm = vec, math.Sqrt(sum)
	if s := strings.TrimSpace(q.NearLimit); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxNearLimit {
			return nil, engine.FieldError("nearLimit", "must be an integer from 1 to 1000")
		}
		nq.limit = n
	}
	if s := strings.TrimSpace(q.NearMinScore); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !isNumberText(s) || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, engine.FieldError("nearMinScore", "must be a number")
		}
		nq.minScore, nq.hasMin = f, true
	}
	return nq, nil
}
