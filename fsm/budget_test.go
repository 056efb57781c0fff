package fsm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"svcd/fsm"
)

// budgetRegistry: typeDDL, a fill that inserts rows 1..n (ascending or
// descending: the same content in another page layout) and a scan that
// runs queries under a budget and returns what they used.
func budgetRegistry() *fsm.Registry {
	r := testRegistry()
	r.Register(40, "fill", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		var p struct {
			N    int  `json:"n"`
			Desc bool `json:"desc"`
		}
		if err := json.Unmarshal(c.Payload, &p); err != nil {
			return nil, err
		}
		for i := range p.N {
			k := i + 1
			if p.Desc {
				k = p.N - i
			}
			if _, err := tx.Exec(`INSERT INTO items (k, v, w) VALUES (?, ?, ?)`, k, fmt.Sprintf("item-%07d", k*7919%p.N), k%13); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	r.Register(41, "scan", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		var p struct {
			Ticks int64  `json:"ticks"`
			Query string `json:"query"`
		}
		if err := json.Unmarshal(c.Payload, &p); err != nil {
			return nil, err
		}
		stop := tx.Budget(p.Ticks)
		var n int64
		err := tx.QueryRow(p.Query).Scan(&n)
		used, exceeded := stop()
		if err = fsm.BudgetError(err, exceeded); err != nil {
			return nil, err
		}
		// A statement after the budget is spent runs unbudgeted.
		if err := tx.QueryRow(`SELECT count(*) FROM items`).Scan(&n); err != nil {
			return nil, fmt.Errorf("after the budget: %w", err)
		}
		return used, nil
	})
	return r
}

// TestBudget: a scan is interrupted when its budget runs out, with the
// transaction still usable; under a budget it completes; the ticks a
// query uses are the same whatever the page layout of the same content.
func TestBudget(t *testing.T) {
	stores := map[string]*fsm.Store{}
	for _, desc := range []bool{false, true} {
		name := fmt.Sprintf("desc=%v", desc)
		s, _ := openStore(t, filepath.Join(t.TempDir(), "data.db"), budgetRegistry())
		t.Cleanup(func() { closeStore(t, s) })
		fill, _ := json.Marshal(map[string]any{"n": 20000, "desc": desc})
		res := apply(t, s,
			ddlEntry(1, `CREATE TABLE items (k INTEGER PRIMARY KEY, v TEXT NOT NULL, w INTEGER NOT NULL)`),
			ddlEntry(2, `CREATE INDEX items_w ON items (w)`),
			cmdEntry(3, 40, fill))
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		stores[name] = s
	}
	queries := []string{
		`SELECT count(*) FROM items WHERE v LIKE '%99%'`,
		`SELECT count(*) FROM items WHERE w = 7`,
		`SELECT count(*) FROM (SELECT v FROM items ORDER BY v DESC LIMIT 500)`,
		`SELECT count(*) FROM items AS a WHERE EXISTS (SELECT 1 FROM items AS b WHERE b.w = a.w AND b.k = a.k + 1)`,
	}
	idx := uint64(10)
	for _, q := range queries {
		used := map[string]int64{}
		for name, s := range stores {
			idx++
			p, _ := json.Marshal(map[string]any{"ticks": 1 << 40, "query": q})
			r := apply(t, s, cmdEntry(idx, 41, p))[0]
			if r.Err != nil {
				t.Fatalf("%s: %q: %v", name, q, r.Err)
			}
			used[name] = r.Value.(int64)
		}
		if used["desc=false"] != used["desc=true"] || used["desc=false"] == 0 {
			t.Errorf("%q used %v ticks: not the same for the same content", q, used)
		}
		// One tick less than it needs: interrupted, identically.
		for name, s := range stores {
			idx++
			p, _ := json.Marshal(map[string]any{"ticks": used[name] - 1, "query": q})
			if r := apply(t, s, cmdEntry(idx, 41, p))[0]; !errors.Is(r.Err, fsm.ErrBudgetExceeded) {
				t.Errorf("%s: %q with %d ticks: %v, want ErrBudgetExceeded", name, q, used[name]-1, r.Err)
			}
		}
		t.Logf("%q: %d ticks (%d instructions)", q, used["desc=false"], used["desc=false"]*fsm.BudgetTick)
	}
}
