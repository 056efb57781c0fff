package api

import (
	"strings"
	"testing"

	"svcd/engine"
)

// FuzzBatchBody parses arbitrary batch bodies: never a panic; a refusal is
// a 400 or a 422; an accepted body holds 1 to 100 operations, each a known
// action on a non-empty collection with an id exactly when the action needs
// one, and a JSON object body exactly for writes that carry one.
func FuzzBatchBody(f *testing.F) {
	f.Add([]byte(`{"requests":[{"method":"POST","url":"/api/v1/posts","body":{"title":"a"}}]}`))
	f.Add([]byte(`{"requests":[{"method":"get","url":"/api/collections/posts/records/abc?filter=a%3D1&expand=x"}]}`))
	f.Add([]byte(`{"requests":[{"method":"PATCH","url":"/api/v1/posts/abc","body":null,"headers":{"if-match":"W/\"x\""}}]}`))
	f.Add([]byte(`{"requests":[{"method":"DELETE","url":"/api/v1/collections/posts/records/abc"}]}`))
	f.Add([]byte(`{"requests":[{"method":"PUT","url":"http://h/api/v1/posts/abc"}]}`))
	f.Add([]byte(`{"requests":[{"method":"GET","url":"/api/v1/admin/collections"}]}`))
	f.Add([]byte(`{"requests":[]}`))
	f.Add([]byte(`{"requests":[{"method":"GET","url":"/api/v1/%zz"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		reqs, _, err := parseBatchBody(body)
		if err != nil {
			de := engine.AsError(err)
			if de == nil || (de.Kind != engine.KindBadRequest && de.Kind != engine.KindValidation) {
				t.Fatalf("refusal %v is not a 400 or 422", err)
			}
			return
		}
		if len(reqs) == 0 || len(reqs) > engine.MaxBatchOps {
			t.Fatalf("%d operations accepted", len(reqs))
		}
		for i, r := range reqs {
			op := r.Op
			if op.Collection == "" || strings.Contains(op.Collection, "/") || strings.Contains(op.ID, "/") {
				t.Fatalf("op %d: collection %q id %q", i, op.Collection, op.ID)
			}
			needsID := op.Action == engine.BatchGet || op.Action == engine.BatchUpdate || op.Action == engine.BatchDelete
			switch op.Action {
			case engine.BatchCreate, engine.BatchList, engine.BatchGet, engine.BatchUpdate, engine.BatchDelete:
			default:
				t.Fatalf("op %d: action %q", i, op.Action)
			}
			if needsID != (op.ID != "") {
				t.Fatalf("op %d: %s with id %q", i, op.Action, op.ID)
			}
			writes := op.Action == engine.BatchCreate || op.Action == engine.BatchUpdate
			if writes != (len(op.Body) > 0 || op.Fields != nil) {
				t.Fatalf("op %d: %s with body %q", i, op.Action, op.Body)
			}
		}
	})
}
