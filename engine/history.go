package engine

import (
	"bytes"
	"encoding/json"
	"fmt"

	"svcd/engine/schema"
	"svcd/fsm"
)

// Record history: a collection with history_enabled gets one row in
// _svc_history per create, update and delete of its records, written by
// the state machine in the transaction of the change (engine/
// record_written.go), so every replica holds the same history and a
// rolled-back command leaves none.

// Actor is who made a change, carried in the command: the proposer knows
// the caller, the state machine only what the command says.
type Actor struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"` // admin, user or anonymous
}

// actorOf is p as a history actor.
func actorOf(p Principal) *Actor {
	switch p.Kind {
	case AdminPrincipal:
		return &Actor{ID: p.ID, Type: "admin"}
	case User:
		return &Actor{ID: p.ID, Type: "user"}
	}
	return &Actor{Type: "anonymous"}
}

// historySnapshot is a record as history keeps it: the stored values
// (sealed ones stay sealed) of its fields by name, in the command
// encoding; private fields (password hashes) are never kept.
type historySnapshot struct {
	ID      string         `json:"id"`
	Created any            `json:"created"`
	Updated any            `json:"updated"`
	Fields  map[string]any `json:"fields"`
}

// registerHistoryHooks keeps the history of history_enabled collections:
// an entry per record write, and none left of a deleted collection.
func (e *Engine) registerHistoryHooks() {
	e.OnRecordWrite(RecordHook{Name: "history", Apply: func(tx *fsm.Tx, w *RecordWrite) error {
		if !w.Coll.HistoryEnabled {
			return nil
		}
		return writeHistory(tx, w.Kind, w.Coll, w.Row, w.At, w.By)
	}})
	e.OnCollectionChange(CollectionHook{Name: "history", Apply: func(tx *fsm.Tx, c CollectionChange) error {
		if c.New != nil {
			return nil
		}
		_, err := tx.Exec(`DELETE FROM _svc_history WHERE collection_id = ?`, c.Old.ID)
		return err
	}})
}

// registerHistoryMigrations adds the history table (version 4 of the
// baseline: never change it).
func (e *Engine) registerHistoryMigrations() {
	e.Migration(Migration{Version: 4, Owner: "history", Stmts: []string{
		// Ids follow the log's order on every replica.
		`CREATE TABLE _svc_history (id INTEGER PRIMARY KEY, collection_id TEXT NOT NULL, record_id TEXT NOT NULL,
			op TEXT NOT NULL, at INTEGER NOT NULL, snapshot TEXT NOT NULL, actor_id TEXT NOT NULL,
			actor_type TEXT NOT NULL)`,
		`CREATE INDEX _svc_history_record ON _svc_history (collection_id, record_id, id)`,
	}})
}

func historyOp(kind string) string {
	switch kind {
	case EvRecordCreate:
		return "create"
	case EvRecordDelete:
		return "delete"
	}
	return "update"
}

// writeHistory appends the history entry of a change of ci's record.
func writeHistory(tx *fsm.Tx, kind string, ci *Coll, row []any, at int64, actor *Actor) error {
	snap := historySnapshot{ID: asString(row[0]), Created: row[1], Updated: row[2], Fields: make(map[string]any, len(ci.fields))}
	for i, f := range ci.fields {
		if !f.private {
			snap.Fields[f.Name] = row[3+i]
		}
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("%w: history snapshot: %v", fsm.ErrHalt, err)
	}
	a := Actor{Type: "system"}
	if actor != nil {
		a = *actor
	}
	_, err = tx.Exec(`INSERT INTO _svc_history (collection_id, record_id, op, at, snapshot, actor_id, actor_type)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, ci.ID, snap.ID, historyOp(kind), at, string(b), a.ID, a.Type)
	return err
}

// snapshotRow turns a kept snapshot back into a row of ci as it is now:
// fields the snapshot lacks, or whose value no longer fits the field's
// column, are empty.
func snapshotRow(ci *Coll, raw string) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var snap historySnapshot
	if err := dec.Decode(&snap); err != nil {
		return nil, fmt.Errorf("engine: history snapshot: %w", err)
	}
	row := make([]any, 3+len(ci.fields))
	row[0] = snap.ID
	row[1], _ = storedFromCommand(schema.ColInteger, snap.Created)
	row[2], _ = storedFromCommand(schema.ColInteger, snap.Updated)
	for i, f := range ci.fields {
		if v, ok := snap.Fields[f.Name]; ok && !f.private {
			row[3+i], _ = storedFromCommand(f.typ.Column(f.Field), v)
		}
	}
	return row, nil
}
