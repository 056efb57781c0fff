package fsm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"svcd/fsm"
)

// Command types used only by the digest tests.
const (
	typeUpsertItem fsm.Type = 10
	typeDeleteItem fsm.Type = 11
	typeTag        fsm.Type = 12
	typeBump       fsm.Type = 13
	typeLoose      fsm.Type = 14
)

type itemPayload struct {
	ID    int64    `json:"id"`
	Name  *string  `json:"name,omitempty"`
	Qty   *int64   `json:"qty,omitempty"`
	Price *float64 `json:"price,omitempty"`
	Data  []byte   `json:"data,omitempty"`
	Tag   string   `json:"tag,omitempty"`
	By    int64    `json:"by,omitempty"`
}

// loosePayload carries one value of a chosen SQLite storage class.
type loosePayload struct {
	Kind string  `json:"kind"`
	I    int64   `json:"i,omitempty"`
	F    float64 `json:"f,omitempty"`
	S    string  `json:"s,omitempty"`
	B    []byte  `json:"b,omitempty"`
}

var errNoItem = errors.New("no such item")

func digestRegistry() *fsm.Registry {
	r := testRegistry()
	decode := func(c fsm.Command) (itemPayload, error) {
		var p itemPayload
		err := json.Unmarshal(c.Payload, &p)
		return p, err
	}
	r.Register(typeUpsertItem, "upsert-item", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		p, err := decode(c)
		if err != nil {
			return nil, err
		}
		_, err = tx.Exec(`INSERT INTO items (id, name, qty, price, data, rev) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, qty = excluded.qty,
			price = excluded.price, data = excluded.data, rev = excluded.rev`,
			p.ID, p.Name, p.Qty, p.Price, p.Data, int64(tx.Index()))
		return nil, err
	})
	r.Register(typeDeleteItem, "delete-item", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		p, err := decode(c)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`DELETE FROM tags WHERE item = ?`, p.ID); err != nil {
			return nil, err
		}
		_, err = tx.Exec(`DELETE FROM items WHERE id = ?`, p.ID)
		return nil, err
	})
	r.Register(typeTag, "tag", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		p, err := decode(c)
		if err != nil {
			return nil, err
		}
		_, err = tx.Exec(`INSERT OR IGNORE INTO tags (item, tag) VALUES (?, ?)`, p.ID, p.Tag)
		return nil, err
	})
	r.Register(typeBump, "bump", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		p, err := decode(c)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`INSERT INTO tags (item, tag) VALUES (?, 'bumped') ON CONFLICT DO NOTHING`, p.ID); err != nil {
			return nil, err
		}
		res, err := tx.Exec(`UPDATE items SET qty = COALESCE(qty, 0) + ? WHERE id = ?`, p.By, p.ID)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, errNoItem // rolls back the tag above
		}
		return nil, nil
	})
	r.Register(typeLoose, "loose", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		var p loosePayload
		if err := json.Unmarshal(c.Payload, &p); err != nil {
			return nil, err
		}
		var v any
		switch p.Kind {
		case "int":
			v = p.I
		case "real":
			v = p.F
		case "text":
			v = p.S
		case "blob":
			v = p.B
		}
		_, err := tx.Exec(`INSERT INTO loose (at, v) VALUES (?, ?)`, int64(tx.Index()), v)
		return nil, err
	})
	return r
}

var digestDDL = []string{
	`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price REAL, data BLOB, rev INTEGER NOT NULL)`,
	`CREATE TABLE tags (item INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (item, tag)) WITHOUT ROWID`,
	`CREATE TABLE loose (at INTEGER NOT NULL, v)`,
	`CREATE INDEX items_name ON items (name)`,
}

// randomLog builds a deterministic log: DDL first, then n random commands,
// with failing, panicking, unknown and membership entries mixed in.
func randomLog(rng *rand.Rand, n int) []fsm.Entry {
	var log []fsm.Entry
	next := func() uint64 { return uint64(len(log) + 1) }
	for _, ddl := range digestDDL {
		log = append(log, ddlEntry(next(), ddl))
	}
	js := func(v any) []byte { b, _ := json.Marshal(v); return b }
	for range n {
		idx := next()
		id := rng.Int64N(40) + 1
		switch k := rng.IntN(100); {
		case k < 35:
			p := itemPayload{ID: id}
			if rng.IntN(5) > 0 {
				s := fmt.Sprintf("item-%d-%d", id, rng.IntN(1000))
				p.Name = &s
			}
			if rng.IntN(4) > 0 {
				q := rng.Int64N(2000) - 1000
				p.Qty = &q
			}
			if rng.IntN(3) > 0 {
				f := rng.NormFloat64() * 1e3
				p.Price = &f
			}
			if rng.IntN(3) == 0 {
				p.Data = make([]byte, rng.IntN(64))
				for i := range p.Data {
					p.Data[i] = byte(rng.IntN(256))
				}
			}
			log = append(log, cmdEntry(idx, typeUpsertItem, js(p)))
		case k < 43:
			log = append(log, cmdEntry(idx, typeDeleteItem, js(itemPayload{ID: id})))
		case k < 63:
			log = append(log, cmdEntry(idx, typeTag, js(itemPayload{ID: id, Tag: fmt.Sprintf("t%d", rng.IntN(6))})))
		case k < 78:
			log = append(log, cmdEntry(idx, typeBump, js(itemPayload{ID: id, By: rng.Int64N(10) + 1})))
		case k < 88:
			var p loosePayload
			switch rng.IntN(5) {
			case 0:
				p = loosePayload{Kind: "int", I: rng.Int64()}
			case 1:
				p = loosePayload{Kind: "real", F: rng.Float64()}
			case 2:
				p = loosePayload{Kind: "text", S: fmt.Sprint(rng.IntN(100))}
			case 3:
				p = loosePayload{Kind: "blob", B: []byte(fmt.Sprint(rng.IntN(100)))}
			default:
				p = loosePayload{Kind: "null"}
			}
			log = append(log, cmdEntry(idx, typeLoose, js(p)))
		case k < 92:
			log = append(log, fsm.Entry{Index: idx, Membership: true})
		case k < 95:
			log = append(log, cmdEntry(idx, typeFail, nil))
		case k < 97:
			log = append(log, cmdEntry(idx, typePanic, nil))
		default:
			log = append(log, fsm.Entry{Index: idx, Data: fsm.Command{Type: 999, Flags: fsm.FlagIgnoreUnknown}.Encode()})
		}
	}
	return log
}

// applyInBatches applies log[from:] in batches of 1..maxBatch entries.
func applyInBatches(t *testing.T, s *fsm.Store, log []fsm.Entry, rng *rand.Rand, maxBatch int) {
	t.Helper()
	for i := 0; i < len(log); {
		n := min(1+rng.IntN(maxBatch), len(log)-i)
		apply(t, s, log[i:i+n]...)
		i += n
	}
}

func TestDigestSameLogSameDigest(t *testing.T) {
	const seed = 20240611
	log := randomLog(rand.New(rand.NewPCG(seed, 0)), 700)
	last := log[len(log)-1].Index
	dir := t.TempDir()

	// A: random batches of up to 16 entries.
	a, _ := openStore(t, filepath.Join(dir, "a.db"), digestRegistry())
	applyInBatches(t, a, log, rand.New(rand.NewPCG(seed, 1)), 16)

	// B: other batch boundaries, with a restart half-way that replays an
	// overlapping window.
	pathB := filepath.Join(dir, "b.db")
	b, _ := openStore(t, pathB, digestRegistry())
	applyInBatches(t, b, log[:400], rand.New(rand.NewPCG(seed, 2)), 64)
	closeStore(t, b)
	b, _ = openStore(t, pathB, digestRegistry())
	applyInBatches(t, b, log[350:], rand.New(rand.NewPCG(seed, 3)), 48)

	// C: the whole log in one transaction.
	c, _ := openStore(t, filepath.Join(dir, "c.db"), digestRegistry())
	apply(t, c, log...)

	da, db, dc := digest(t, a), digest(t, b), digest(t, c)
	for _, k := range []string{"schema", "table:items", "table:tags", "table:loose", "table:_svc_meta"} {
		if da[k] == "" {
			t.Errorf("digest has no %q entry: %v", k, da)
		}
	}
	if !reflect.DeepEqual(da, db) {
		t.Errorf("seed %d: digests of A and B differ:\nA %v\nB %v", seed, da, db)
	}
	if !reflect.DeepEqual(da, dc) {
		t.Errorf("seed %d: digests of A and C differ:\nA %v\nC %v", seed, da, dc)
	}
	for _, s := range []*fsm.Store{a, b, c} {
		if got := s.AppliedIndex(); got != last {
			t.Errorf("AppliedIndex = %d, want %d", got, last)
		}
	}
	// The log really produced data in every table.
	for _, tbl := range []string{"items", "tags", "loose"} {
		if countRows(t, a, tbl) == 0 {
			t.Errorf("table %s is empty: the random log is too weak", tbl)
		}
	}
	if !reflect.DeepEqual(digest(t, a), da) {
		t.Error("Digest is not stable across calls")
	}

	// One more command on one replica only changes its digest.
	p, _ := json.Marshal(itemPayload{ID: 1000, Tag: "only-a"})
	mustApply(t, a, cmdEntry(last+1, typeTag, p))
	mustApply(t, b, fsm.Entry{Index: last + 1, Membership: true})
	da, db = digest(t, a), digest(t, b)
	if da["table:tags"] == db["table:tags"] {
		t.Error("an extra row in tags did not change its digest")
	}
	if da["table:items"] != db["table:items"] || da["schema"] != db["schema"] {
		t.Error("an extra row in tags changed unrelated digest entries")
	}
}

func TestDigestDetectsDifferences(t *testing.T) {
	base := []string{
		`CREATE TABLE t (id INTEGER PRIMARY KEY, v)`,
		`INSERT INTO t VALUES (1, 10), (2, 'x'), (3, 1.5), (4, X'00ff'), (5, NULL)`,
	}
	tests := []struct {
		name  string
		setup []string // run on both replicas
		a, b  []string // run on one replica only
		diff  string   // prefix of the digest keys expected to differ; "" for equal
	}{
		{name: "identical", setup: base},
		{
			name:  "same rows inserted in another order",
			setup: []string{`CREATE TABLE u (a, b)`},
			a:     []string{`INSERT INTO u VALUES (1, 'a'), (2, 'b'), (2, 'a')`},
			b:     []string{`INSERT INTO u VALUES (2, 'a'), (2, 'b'), (1, 'a')`},
		},
		{name: "integer value", setup: base, b: []string{`UPDATE t SET v = 11 WHERE id = 1`}, diff: "table:t"},
		{name: "text value", setup: base, b: []string{`UPDATE t SET v = 'y' WHERE id = 2`}, diff: "table:t"},
		{name: "real value one ulp apart", setup: base, b: []string{`UPDATE t SET v = 1.5000000000000002 WHERE id = 3`}, diff: "table:t"},
		{name: "blob value", setup: base, b: []string{`UPDATE t SET v = X'00fe' WHERE id = 4`}, diff: "table:t"},
		{name: "null vs empty text", setup: base, b: []string{`UPDATE t SET v = '' WHERE id = 5`}, diff: "table:t"},
		{name: "null vs zero", setup: base, b: []string{`UPDATE t SET v = 0 WHERE id = 5`}, diff: "table:t"},
		{
			name:  "zero vs empty text",
			setup: base,
			a:     []string{`UPDATE t SET v = 0 WHERE id = 5`},
			b:     []string{`UPDATE t SET v = '' WHERE id = 5`},
			diff:  "table:t",
		},
		{name: "integer vs text of same digits", setup: base, b: []string{`UPDATE t SET v = '10' WHERE id = 1`}, diff: "table:t"},
		{name: "integer vs equal real", setup: base, b: []string{`UPDATE t SET v = 10.0 WHERE id = 1`}, diff: "table:t"},
		{name: "text vs blob of same bytes", setup: base, b: []string{`UPDATE t SET v = CAST('x' AS BLOB) WHERE id = 2`}, diff: "table:t"},
		{name: "extra row", setup: base, b: []string{`INSERT INTO t VALUES (6, 'new')`}, diff: "table:t"},
		{name: "missing row", setup: base, b: []string{`DELETE FROM t WHERE id = 5`}, diff: "table:t"},
		{name: "row under another key", setup: base, b: []string{`UPDATE t SET id = 7 WHERE id = 5`}, diff: "table:t"},
		{
			name:  "column boundary shift",
			setup: []string{`CREATE TABLE u (a TEXT, b TEXT)`},
			a:     []string{`INSERT INTO u VALUES ('ab', 'c')`},
			b:     []string{`INSERT INTO u VALUES ('a', 'bc')`},
			diff:  "table:u",
		},
		{name: "extra index", setup: base, b: []string{`CREATE INDEX t_v ON t (v)`}, diff: "schema"},
		{
			name: "declared type",
			a:    []string{`CREATE TABLE w (v INTEGER)`},
			b:    []string{`CREATE TABLE w (v NUMERIC)`},
			diff: "schema",
		},
		{
			name:  "applied index",
			setup: []string{`CREATE TABLE _svc_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID`},
			a:     []string{`INSERT INTO _svc_meta VALUES ('applied_index', 5)`},
			b:     []string{`INSERT INTO _svc_meta VALUES ('applied_index', 6)`},
			diff:  "table:_svc_meta",
		},
		{
			name:  "fts5 content",
			setup: []string{`CREATE VIRTUAL TABLE f USING fts5(body)`, `INSERT INTO f VALUES ('hello world')`},
			b:     []string{`INSERT INTO f VALUES ('another document')`},
			diff:  "table:f_",
		},
		// Columns whose declared type makes the driver convert values on
		// Scan: the digest must still see the stored values.
		{
			name:  "boolean column 1 vs 2",
			setup: []string{`CREATE TABLE b (id INTEGER PRIMARY KEY, flag BOOLEAN)`},
			a:     []string{`INSERT INTO b VALUES (1, 1)`},
			b:     []string{`INSERT INTO b VALUES (1, 2)`},
			diff:  "table:b",
		},
		{
			name:  "boolean column 0 vs -1",
			setup: []string{`CREATE TABLE b (id INTEGER PRIMARY KEY, flag BOOLEAN)`},
			a:     []string{`INSERT INTO b VALUES (1, 0)`},
			b:     []string{`INSERT INTO b VALUES (1, -1)`},
			diff:  "table:b",
		},
		{
			name:  "datetime column, two spellings of one instant",
			setup: []string{`CREATE TABLE d (id INTEGER PRIMARY KEY, at DATETIME)`},
			a:     []string{`INSERT INTO d VALUES (1, '2024-01-02 03:04:05')`},
			b:     []string{`INSERT INTO d VALUES (1, '2024-01-02T03:04:05Z')`},
			diff:  "table:d",
		},
		{
			name:  "datetime column, two texts that are not dates",
			setup: []string{`CREATE TABLE d (id INTEGER PRIMARY KEY, at DATETIME)`},
			a:     []string{`INSERT INTO d VALUES (1, 'pending')`},
			b:     []string{`INSERT INTO d VALUES (1, 'unknown')`},
			diff:  "table:d",
		},
		{
			name:  "timestamp column, integer vs text",
			setup: []string{`CREATE TABLE d (id INTEGER PRIMARY KEY, at TIMESTAMP)`},
			a:     []string{`INSERT INTO d VALUES (1, 0)`},
			b:     []string{`INSERT INTO d VALUES (1, '1970-01-01 00:00:00')`},
			diff:  "table:d",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			open := func(name string, only []string) map[string]string {
				path := filepath.Join(dir, name)
				seedDB(t, path, append(append([]string(nil), tc.setup...), only...)...)
				s, _ := openStore(t, path, nil)
				return digest(t, s)
			}
			da, db := open("a.db", tc.a), open("b.db", tc.b)
			var differ []string
			for k := range da {
				if da[k] != db[k] {
					differ = append(differ, k)
				}
			}
			for k := range db {
				if _, ok := da[k]; !ok {
					differ = append(differ, k)
				}
			}
			sort.Strings(differ)
			if tc.diff == "" {
				if len(differ) != 0 {
					t.Fatalf("digests differ in %v, want equal", differ)
				}
				return
			}
			if len(differ) == 0 {
				t.Fatalf("digests are equal, want a difference in %s*", tc.diff)
			}
			for _, k := range differ {
				if !strings.HasPrefix(k, tc.diff) {
					t.Errorf("digest entry %s differs too, want only %s*", k, tc.diff)
				}
			}
			if _, ok := da["table:f"]; ok {
				t.Errorf("virtual table hashed directly")
			}
		})
	}
}
