package fsm_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"svcd/fsm"
)

const typeNested fsm.Type = 40

// nestedRegistry is the test registry plus a handler that inserts each key
// of its payload under its own nested savepoint, emitting an event per
// row: a duplicate key fails alone and the command goes on.
func nestedRegistry() *fsm.Registry {
	r := testRegistry()
	r.Register(typeNested, "nested", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		var keys []string
		if err := json.Unmarshal(c.Payload, &keys); err != nil {
			return nil, err
		}
		var failed []string
		for _, k := range keys {
			err := tx.Nested(func() error {
				tx.Emit(fsm.Event{Kind: "put", Subject: k})
				_, err := tx.Exec(`INSERT INTO kv (k, v, idx) VALUES (?, 'n', ?)`, k, int64(tx.Index()))
				return err
			})
			if err != nil {
				failed = append(failed, k)
			}
		}
		return failed, nil
	})
	return r
}

// TestTxNested: a failing nested part rolls back its statements and drops
// its events; the rest of the command commits, on the fast path (no
// command fails) and on the savepoint path (another command of the batch
// fails).
func TestTxNested(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nestedRegistry())
	var mu sync.Mutex
	var events []string
	s.Observe(func(evs []fsm.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range evs {
			if e.Kind == "put" {
				events = append(events, e.Subject)
			}
		}
	})
	nested := func(idx uint64, keys ...string) fsm.Entry {
		b, _ := json.Marshal(keys)
		return cmdEntry(idx, typeNested, b)
	}
	mustApply(t, s, ddlEntry(1, kvDDL))
	res := apply(t, s, nested(2, "a", "b", "a", "c"))
	if res[0].Err != nil || !reflect.DeepEqual(res[0].Value, []string{"a"}) {
		t.Fatalf("fast path: %+v", res[0])
	}
	res = apply(t, s, nested(3, "d", "b", "e"), cmdEntry(4, typeFail, nil))
	if res[0].Err != nil || !reflect.DeepEqual(res[0].Value, []string{"b"}) || !errors.Is(res[1].Err, errRejected) {
		t.Fatalf("savepoint path: %+v", res)
	}
	var keys []string
	err := s.View(context.Background(), func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT k FROM kv ORDER BY k`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			keys = append(keys, k)
		}
		return rows.Err()
	})
	if err != nil || !reflect.DeepEqual(keys, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("rows %v (%v), want a b c d e", keys, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"a", "b", "c", "d", "e"}; !reflect.DeepEqual(events, want) {
		t.Errorf("events %v, want %v (a failed part's event must be dropped)", events, want)
	}
}
