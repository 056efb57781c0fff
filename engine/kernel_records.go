package engine

import (
	"bytes"
	"encoding/json"

	"svcd/engine/schema"
	"svcd/fsm"
)

// Kernel exports for modules that read stored rows or create records
// inside their own commands (engine/csv). A create is validated by the
// proposer (AdminCreates), carried in the module's command and
// applied there exactly as record.create applies it (ApplyRecordCreate):
// nothing in it draws a clock or a random number at apply time.

// RecordCreate is one record create, validated and ready to apply. A
// module carries it in its own command: its JSON is record.create's
// payload.
type RecordCreate struct{ cmd recordCreateCmd }

// MarshalJSON encodes the create as record.create's payload.
func (c RecordCreate) MarshalJSON() ([]byte, error) { return json.Marshal(c.cmd) }

// UnmarshalJSON decodes what MarshalJSON wrote, numbers kept exact (as
// DecodeCmd keeps them).
func (c *RecordCreate) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(&c.cmd)
}

// AppendCreates appends the compact binary form (cmd_binary.go) of a run
// of creates, for a module whose command carries creates; it fails with
// ErrNoBinary for a value the binary form does not cover, and the
// module's command then goes as JSON.
func AppendCreates(b []byte, creates []RecordCreate) ([]byte, error) {
	cs := make([]*recordCreateCmd, len(creates))
	for i := range creates {
		cs[i] = &creates[i].cmd
	}
	w := &binWriter{b: b}
	if err := appendCreates(w, cs); err != nil {
		return nil, err
	}
	return w.b, nil
}

// ReadCreates reads what AppendCreates wrote.
func ReadCreates(b []byte) ([]RecordCreate, error) {
	r := &binReader{b: b}
	cs := readCreates(r)
	if err := r.done(); err != nil {
		return nil, err
	}
	out := make([]RecordCreate, len(cs))
	for i := range cs {
		out[i].cmd = cs[i]
	}
	return out, nil
}

// AdminCreates prepares admin creates of records of one collection at
// one time as one caller proposes them (a CSV import chunk): they share
// the caller's rule context and actor, built once.
type AdminCreates struct {
	rs    *Records
	ci    *Coll
	now   int64
	env   *RuleEnv
	actor *Actor
}

// AdminCreates starts preparing creates of records of ci at now (unix
// seconds) as p. The commands keep p as their actor and p's rule context
// without the body (an admin's create is not judged by rules).
func (rs *Records) AdminCreates(p Principal, ci *Coll, now int64) *AdminCreates {
	return &AdminCreates{rs: rs, ci: ci, now: now, env: rs.e.envFor(p, ci, nil, now), actor: actorOf(p)}
}

// Prepare validates body as one create: the id (drawn when body has
// none), every field's stored value with passwords hashed and autodates
// set.
func (a *AdminCreates) Prepare(body map[string]any) (RecordCreate, *Error) {
	id, values, verr := a.rs.prepareCreate(a.ci, body, true, a.now)
	if verr != nil {
		return RecordCreate{}, verr
	}
	return RecordCreate{cmd: recordCreateCmd{
		Coll: a.ci.ID, Ver: a.ci.Version, Admin: true, ID: id, Now: a.now, Values: values,
		Env: a.env, Actor: a.actor,
	}}, nil
}

// ApplyRecordCreate applies c inside a module's command as record.create
// applies it (relations, unique values, the create rule, the record-write
// hooks). ci is the collection CollForApply returned for the module's
// command; it replaces the collection and version c was prepared for.
func (rs *Records) ApplyRecordCreate(tx *fsm.Tx, ci *Coll, c *RecordCreate) error {
	c.cmd.Coll, c.cmd.Ver = ci.ID, ci.Version
	_, err := rs.recordCreateIn(tx, ci, &c.cmd)
	return err
}

// ReadRows appends to dst the stored rows of ci whose id sorts after
// after, in id order, at most limit of them: id, created, updated, then
// RowFields() (sealed values as stored; see Open).
func (ci *Coll) ReadRows(r *fsm.Reader, dst [][]any, after string, limit int) ([][]any, error) {
	rows, err := r.Query("SELECT "+ci.selectCols+" FROM "+ci.table+" WHERE id > ?1 ORDER BY id LIMIT ?2", after, limit)
	if err != nil {
		return dst, err
	}
	defer rows.Close()
	for rows.Next() {
		row, err := ci.scanRow(rows.Scan)
		if err != nil {
			return dst, err
		}
		dst = append(dst, row)
	}
	return dst, rows.Err()
}

// Open is a stored value of ci as it is rendered: a sealed value opened
// when this node has the key, any other value as it is.
func (ci *Coll) Open(v any) any { return ci.open(v) }

// FieldType is the implementation of the field's type (validation and
// JSON rendering of its values).
func (f *FieldInfo) FieldType() schema.FieldType { return f.typ }
