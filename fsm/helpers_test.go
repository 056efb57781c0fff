package fsm_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // "sqlite3" driver for fixtures written beside the Store

	"svcd/fsm"
)

// Command types of the test registry.
const (
	typePut   fsm.Type = 1 // insert one row into kv
	typeDDL   fsm.Type = 2 // run the payload as a DDL statement
	typeFail  fsm.Type = 3 // insert a row, emit an event, then return errRejected
	typePanic fsm.Type = 4 // insert a row, emit an event, then panic
	typeMulti fsm.Type = 5 // insert several rows; fails half-way on a duplicate key
	typeHalt  fsm.Type = 6 // insert a row, then return an error wrapping ErrHalt
)

// kvDDL is the table the put-style handlers write to.
const kvDDL = `CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL, idx INTEGER NOT NULL)`

// opTimeout bounds every call that must not block: a hung ApplyBatch fails
// the test instead of the whole package timing out.
const opTimeout = 10 * time.Second

var errRejected = errors.New("rejected by handler")

type putPayload struct {
	K string `json:"k"`
	V string `json:"v"`
}

func testRegistry() *fsm.Registry {
	r := fsm.NewRegistry()
	r.Register(typeDDL, "ddl", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		if _, err := tx.ExecDirect(string(c.Payload)); err != nil {
			return nil, err
		}
		tx.Emit(fsm.Event{Kind: "schema", Subject: string(c.Payload)})
		return "ddl-ok", nil
	})
	r.Register(typePut, "put", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		var p putPayload
		if err := json.Unmarshal(c.Payload, &p); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`INSERT INTO kv (k, v, idx) VALUES (?, ?, ?)`, p.K, p.V, int64(tx.Index())); err != nil {
			return nil, err
		}
		tx.Emit(fsm.Event{Kind: "put", Subject: p.K, Data: p.V})
		return "put:" + p.K, nil
	})
	r.Register(typeFail, "fail", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		k := fmt.Sprintf("fail-%d", tx.Index())
		if _, err := tx.Exec(`INSERT INTO kv (k, v, idx) VALUES (?, ?, ?)`, k, "x", int64(tx.Index())); err != nil {
			return nil, err
		}
		tx.Emit(fsm.Event{Kind: "put", Subject: k})
		return "must not be returned", errRejected
	})
	r.Register(typePanic, "panic", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		k := fmt.Sprintf("panic-%d", tx.Index())
		if _, err := tx.Exec(`INSERT INTO kv (k, v, idx) VALUES (?, ?, ?)`, k, "x", int64(tx.Index())); err != nil {
			return nil, err
		}
		tx.Emit(fsm.Event{Kind: "put", Subject: k})
		panic("handler exploded")
	})
	r.Register(typeHalt, "halt", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		k := fmt.Sprintf("halt-%d", tx.Index())
		if _, err := tx.Exec(`INSERT INTO kv (k, v, idx) VALUES (?, ?, ?)`, k, "x", int64(tx.Index())); err != nil {
			return nil, err
		}
		tx.Emit(fsm.Event{Kind: "put", Subject: k})
		return nil, fmt.Errorf("payload schema v9 is newer than this node: %w", fsm.ErrHalt)
	})
	r.Register(typeMulti, "multi", func(tx *fsm.Tx, c fsm.Command) (any, error) {
		var keys []string
		if err := json.Unmarshal(c.Payload, &keys); err != nil {
			return nil, err
		}
		for _, k := range keys {
			if _, err := tx.Exec(`INSERT INTO kv (k, v, idx) VALUES (?, ?, ?)`, k, "m", int64(tx.Index())); err != nil {
				return nil, err
			}
			tx.Emit(fsm.Event{Kind: "put", Subject: k})
		}
		return len(keys), nil
	})
	return r
}

func cmdEntry(idx uint64, t fsm.Type, payload []byte) fsm.Entry {
	return fsm.Entry{Index: idx, Data: fsm.Command{Type: t, Version: 1, Payload: payload}.Encode()}
}

func putEntry(idx uint64, k, v string) fsm.Entry {
	b, _ := json.Marshal(putPayload{K: k, V: v})
	return cmdEntry(idx, typePut, b)
}

func ddlEntry(idx uint64, ddl string) fsm.Entry {
	return cmdEntry(idx, typeDDL, []byte(ddl))
}

func multiEntry(idx uint64, keys ...string) fsm.Entry {
	b, _ := json.Marshal(keys)
	return cmdEntry(idx, typeMulti, b)
}

// stallLog records the stalls OnStall reports. Unless allow was called,
// any recorded stall fails the test at cleanup.
type stallLog struct {
	mu      sync.Mutex
	stalls  []fsm.Stall
	allowed bool
}

func (f *stallLog) record(st fsm.Stall) {
	f.mu.Lock()
	f.stalls = append(f.stalls, st)
	f.mu.Unlock()
}

func (f *stallLog) list() []fsm.Stall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fsm.Stall(nil), f.stalls...)
}

func (f *stallLog) allow() {
	f.mu.Lock()
	f.allowed = true
	f.mu.Unlock()
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// openStore opens a Store at path with the test registry (or reg), a quiet
// logger and a recording OnStall, and closes it at cleanup.
func openStore(t testing.TB, path string, reg *fsm.Registry) (*fsm.Store, *stallLog) {
	t.Helper()
	if reg == nil {
		reg = testRegistry()
	}
	fl := &stallLog{}
	s, err := fsm.Open(fsm.Options{Path: path, Registry: reg, Logger: quietLogger, OnStall: fl.record})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		closeStore(t, s)
		fl.mu.Lock()
		defer fl.mu.Unlock()
		if len(fl.stalls) > 0 && !fl.allowed {
			t.Errorf("unexpected stalls: %+v", fl.stalls)
		}
	})
	return s, fl
}

// closeStore closes s, failing rather than hanging if an earlier stuck call
// still holds the store.
func closeStore(t testing.TB, s *fsm.Store) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	wait := opTimeout
	if t.Failed() {
		wait = 2 * time.Second
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(wait):
		t.Errorf("Close did not return within %v (store still held by a stuck call)", wait)
	}
}

// apply runs s.ApplyBatch(entries) and fails the test if it does not return
// within opTimeout.
func apply(t testing.TB, s *fsm.Store, entries ...fsm.Entry) []fsm.Result {
	t.Helper()
	type outcome struct {
		res   []fsm.Result
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{panic: p}
			}
		}()
		done <- outcome{res: s.ApplyBatch(entries)}
	}()
	select {
	case o := <-done:
		if o.panic != nil {
			t.Fatalf("ApplyBatch(%d entries) panicked: %v", len(entries), o.panic)
		}
		res := o.res
		if len(res) != len(entries) {
			t.Fatalf("ApplyBatch returned %d results for %d entries", len(res), len(entries))
		}
		return res
	case <-time.After(opTimeout):
		first := uint64(0)
		if len(entries) > 0 {
			first = entries[0].Index
		}
		t.Fatalf("ApplyBatch(%d entries from index %d) did not return within %v: the apply path is deadlocked",
			len(entries), first, opTimeout)
		return nil
	}
}

// mustApply applies entries and fails on any error or skip.
func mustApply(t testing.TB, s *fsm.Store, entries ...fsm.Entry) []fsm.Result {
	t.Helper()
	res := apply(t, s, entries...)
	for i, r := range res {
		if r.Err != nil || r.Skipped {
			t.Fatalf("entry %d (index %d): Err=%v Skipped=%v", i, entries[i].Index, r.Err, r.Skipped)
		}
	}
	return res
}

// kvKeys returns the keys of table kv in order.
func kvKeys(t testing.TB, s *fsm.Store) []string {
	t.Helper()
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
	if err != nil {
		t.Fatalf("read kv: %v", err)
	}
	return keys
}

func countRows(t testing.TB, s *fsm.Store, table string) int {
	t.Helper()
	var n int
	err := s.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n)
	})
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func digest(t testing.TB, s *fsm.Store) map[string]string {
	t.Helper()
	d, err := s.Digest(context.Background())
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	return d
}

// seedDB writes a fixture database at path directly through the SQLite
// driver, before any Store opens it.
func seedDB(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, st := range stmts {
		if _, err := db.Exec(st); err != nil {
			t.Fatalf("seed %q: %v", st, err)
		}
	}
}

// eventLog collects observed batches.
type eventLog struct {
	mu      sync.Mutex
	batches [][]fsm.Event
}

func (l *eventLog) observe(evs []fsm.Event) {
	l.mu.Lock()
	l.batches = append(l.batches, append([]fsm.Event(nil), evs...))
	l.mu.Unlock()
}

func (l *eventLog) all() [][]fsm.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]fsm.Event(nil), l.batches...)
}
