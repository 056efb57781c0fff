// Package history is the engine's record history module: for collections
// with history_enabled, every create, update and delete of a record is
// kept as a snapshot of its stored fields (password hashes never),
// written by a record-write hook in the change's own transaction, so every
// replica holds the same history. It serves a record's history to those
// who may view the record, and restores a snapshot as an admin's update.
package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// History keeps and serves record history (the module's face for the
// HTTP layer: RecordHistory, RestoreRecord).
type History struct {
	core  *engine.Engine
	files FileRestorer
}

// FileRestorer restores a record's fields together with the files a
// snapshot names, in one write (engine/files; the composition root wires
// it with RestoreFilesWith). body is the snapshot's other fields as a
// JSON update carries them, files the names each file field held then;
// it answers the record and, by field name, the names that could not be
// restored.
type FileRestorer interface {
	RestoreRecord(ctx context.Context, p engine.Principal, coll, id string, body map[string]any,
		files map[string][]string, ifMatch string) (*engine.Record, map[string][]string, uint64, error)
}

// RestoreFilesWith makes restores of records with file fields go through
// f, which brings back the files a snapshot names. Without it, such a
// restore answers what a JSON update naming files answers (422). Call it
// while wiring, before the node serves.
func (h *History) RestoreFilesWith(f FileRestorer) { h.files = f }

// New wires the history module to core: its table, and the hooks that
// keep it.
func New(core *engine.Engine) *History {
	h := &History{core: core}
	h.registerPruner()
	core.Migration(engine.Migration{Version: 4, Owner: "history", Stmts: []string{
		// Version 4 of the baseline: never change it. Ids follow the
		// log's order on every replica.
		`CREATE TABLE _svc_history (id INTEGER PRIMARY KEY, collection_id TEXT NOT NULL, record_id TEXT NOT NULL,
			op TEXT NOT NULL, at INTEGER NOT NULL, snapshot TEXT NOT NULL, actor_id TEXT NOT NULL,
			actor_type TEXT NOT NULL)`,
		`CREATE INDEX _svc_history_record ON _svc_history (collection_id, record_id, id)`,
	}})
	// Version 12 (the jsvm module's version: 7 to 11 went to files, the
	// queue, workflows, webhooks and flags).
	core.Migration(engine.Migration{Version: 12, Owner: "history", Stmts: []string{
		// The code (hook, route, job) that made a change for its actor
		// (engine.Actor.Via); empty for a change the actor made itself.
		`ALTER TABLE _svc_history ADD COLUMN via TEXT NOT NULL DEFAULT ''`,
	}})
	core.OnRecordWrite(engine.RecordHook{Name: "history", Apply: func(tx *fsm.Tx, w *engine.RecordWrite) error {
		if !w.Coll.HistoryEnabled {
			return nil
		}
		return writeHistory(tx, w.Kind, w.Coll, w.Row, w.At, w.By)
	}})
	core.OnCollectionChange(engine.CollectionHook{Name: "history", Apply: func(tx *fsm.Tx, c engine.CollectionChange) error {
		if c.New != nil {
			return nil
		}
		_, err := tx.Exec(`DELETE FROM _svc_history WHERE collection_id = ?`, c.Old.ID)
		return err
	}})
	return h
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

func historyOp(kind string) string {
	switch kind {
	case engine.EvRecordCreate:
		return "create"
	case engine.EvRecordDelete:
		return "delete"
	}
	return "update"
}

// writeHistory appends the history entry of a change of ci's record.
func writeHistory(tx *fsm.Tx, kind string, ci *engine.Coll, row []any, at int64, actor *engine.Actor) error {
	id, _ := row[0].(string)
	fields := ci.RowFields()
	snap := historySnapshot{ID: id, Created: row[1], Updated: row[2], Fields: make(map[string]any, len(fields))}
	for i, f := range fields {
		if !f.Private() {
			snap.Fields[f.Name] = row[3+i]
		}
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("%w: history snapshot: %v", fsm.ErrHalt, err)
	}
	a := engine.Actor{Type: "system"}
	if actor != nil {
		a = *actor
	}
	_, err = tx.Exec(`INSERT INTO _svc_history (collection_id, record_id, op, at, snapshot, actor_id, actor_type, via)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ci.ID, snap.ID, historyOp(kind), at, string(b), a.ID, a.Type, a.Via)
	return err
}

// snapshotRow turns a kept snapshot back into a row of ci as it is now:
// fields the snapshot lacks, or whose value no longer fits the field's
// column, are empty.
func snapshotRow(ci *engine.Coll, raw string) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var snap historySnapshot
	if err := dec.Decode(&snap); err != nil {
		return nil, fmt.Errorf("history: snapshot: %w", err)
	}
	fields := ci.RowFields()
	row := make([]any, 3+len(fields))
	row[0] = snap.ID
	row[1], _ = engine.StoredValue(schema.ColInteger, snap.Created)
	row[2], _ = engine.StoredValue(schema.ColInteger, snap.Updated)
	for i, f := range fields {
		if v, ok := snap.Fields[f.Name]; ok && !f.Private() {
			row[3+i], _ = engine.StoredValue(f.ColumnType(), v)
		}
	}
	return row, nil
}
