package engine

import (
	"encoding/json"
	"fmt"

	"svcd/engine/schema"
	"svcd/fsm"
)

// deletion deletes one record inside the state machine's transaction and
// applies every relation that points at it: restrict refuses the delete
// (409), cascade deletes the referring records (recursively), and otherwise
// the id is removed from the referring records. Collections and records are
// visited in a fixed order, so every replica does the same.
type deletion struct {
	e     *Engine
	tx    *fsm.Tx
	now   int64
	actor *Actor
	seen  map[string]bool // collection id + "/" + record id already deleted
}

// relationRef is a relation field of some collection.
type relationRef struct {
	coll  *Coll
	field *FieldInfo
}

// refsTo lists the relation fields that point at collection id, in
// collection-name then field order.
func (d *deletion) refsTo(id string) ([]relationRef, error) {
	rows, err := d.tx.Query(`SELECT id, version FROM _svc_collections WHERE type != 'view' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	type idVer struct {
		id  string
		ver int64
	}
	var all []idVer
	for rows.Next() {
		var iv idVer
		if err := rows.Scan(&iv.id, &iv.ver); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, iv)
	}
	rows.Close()
	var refs []relationRef
	for _, iv := range all {
		ci, err := d.e.applied.get(d.tx, iv.id, iv.ver)
		if err != nil {
			return nil, err
		}
		for _, f := range ci.fields {
			if f.Type == schema.FieldRelation && f.Collection == id {
				refs = append(refs, relationRef{ci, f})
			}
		}
	}
	return refs, nil
}

// referring returns the rows of ref.coll whose ref.field holds id.
func (d *deletion) referring(ref relationRef, id string) ([][]any, error) {
	where := ref.field.col + " = ?"
	if ref.field.Multiple {
		where = "EXISTS (SELECT 1 FROM json_each(" + ref.field.col + ") WHERE value = ?)"
	}
	rows, err := d.tx.Query("SELECT "+ref.coll.selectCols+" FROM "+ref.coll.table+" WHERE "+where+" ORDER BY id", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		row, err := ref.coll.scanRow(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func (d *deletion) delete(ci *Coll, row []any) error {
	id := AsString(row[0])
	d.seen[ci.ID+"/"+id] = true
	refs, err := d.refsTo(ci.ID)
	if err != nil {
		return err
	}
	type hit struct {
		ref  relationRef
		rows [][]any
	}
	var hits []hit
	restricted := map[string]any{}
	for _, ref := range refs {
		rows, err := d.referring(ref, id)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			continue
		}
		if ref.field.Restrict {
			restricted[ref.coll.Name+"."+ref.field.Name] = fmt.Sprintf("%d record(s) reference this record", len(rows))
			continue
		}
		hits = append(hits, hit{ref, rows})
	}
	if len(restricted) > 0 {
		return &Error{Kind: KindConflict, Message: "The record is referenced by restricting relations", Details: restricted}
	}
	if _, err := d.tx.Exec("DELETE FROM "+ci.table+" WHERE id = ?", id); err != nil {
		return err
	}
	if err := d.e.RecordWritten(d.tx, EvRecordDelete, ci, row, d.now, d.actor); err != nil {
		return err
	}
	for _, h := range hits {
		for _, r := range h.rows {
			rid := AsString(r[0])
			if d.seen[h.ref.coll.ID+"/"+rid] {
				continue
			}
			if h.ref.field.Cascade {
				if err := d.delete(h.ref.coll, r); err != nil {
					return err
				}
				continue
			}
			if err := d.unlink(h.ref, r, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// unlink removes id from the relation field of one referring record.
func (d *deletion) unlink(ref relationRef, row []any, id string) error {
	var v any
	if ref.field.Multiple {
		var ids []string
		if s, ok := row[3+fieldIndex(ref.coll, ref.field)].(string); ok {
			json.Unmarshal([]byte(s), &ids)
		}
		kept := make([]string, 0, len(ids))
		for _, x := range ids {
			if x != id {
				kept = append(kept, x)
			}
		}
		b, _ := json.Marshal(kept)
		v = string(b)
		if len(kept) == 0 && ref.field.Required {
			v = nil
		}
	}
	if v == nil && ref.field.Required {
		return &Error{Kind: KindConflict, Message: "The record is referenced by a required relation",
			Details: map[string]any{ref.coll.Name + "." + ref.field.Name: "required relation would be left empty"}}
	}
	prev, _ := row[2].(int64)
	updated := max(d.now, prev+1)
	q := "UPDATE " + ref.coll.table + " SET " + ref.field.col + " = ?, updated = ? WHERE id = ? RETURNING " + ref.coll.selectCols
	out, err := ref.coll.scanRow(d.tx.QueryRow(q, v, updated, AsString(row[0])).Scan)
	if err != nil {
		return err
	}
	return d.e.RecordWritten(d.tx, EvRecordUpdate, ref.coll, out, updated, d.actor)
}

func fieldIndex(ci *Coll, f *FieldInfo) int {
	for i, x := range ci.fields {
		if x == f {
			return i
		}
	}
	return -1
}
