package files

import (
	"encoding/json"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused.
const (
	// cmdChange adds and removes files of an existing record, possibly
	// with changes to its other fields (a multipart update).
	cmdChange fsm.Type = 82
	// cmdCreate creates a record together with its files (a multipart
	// create).
	cmdCreate fsm.Type = 83
	// cmdTokenUse spends a one-time file token.
	cmdTokenUse fsm.Type = 84
	// cmdPurge drops tombstones whose bytes the collector removed.
	cmdPurge fsm.Type = 85
	// cmdChangeMods is cmdChange whose plain values carry write
	// modifiers ("views+"), applied to the row read at apply: a type of
	// its own, so a binary that does not know modifiers refuses it
	// instead of applying the values without them.
	cmdChangeMods fsm.Type = 170
)

func (m *Files) registerCommands() {
	engine.RegisterResult[removedResult](m.core, "files.removed")
	m.core.Command(cmdChange, "files.change", m.applyChange)
	m.core.Command(cmdChangeMods, "files.change_with_modifiers", m.applyChange)
	m.core.Command(cmdCreate, "files.create", m.applyCreate)
	m.core.Command(cmdTokenUse, "files.token_use", m.applyTokenUse)
	m.core.Command(cmdPurge, "files.purge", m.applyPurge)
}

// fieldChange is what one command does to one file field: drop every
// file (Clear), then the named ones (Remove), then append Add, then the
// names of Restore that can be brought back (a history restore:
// restore.go).
type fieldChange struct {
	Field   string   `json:"field"` // the field's id
	Clear   bool     `json:"clear,omitempty"`
	Remove  []string `json:"remove,omitempty"`
	Add     []string `json:"add,omitempty"`
	Restore []string `json:"restore,omitempty"`
}

// changeCmd changes the files (and, for a multipart update, the other
// fields) of record ID, under the update rule.
type changeCmd struct {
	Coll    string          `json:"coll"`
	Ver     int64           `json:"ver"`
	Admin   bool            `json:"admin"`
	ID      string          `json:"id"`
	Now     int64           `json:"now"`
	IfMatch string          `json:"if_match,omitempty"`
	Env     *engine.RuleEnv `json:"env,omitempty"`
	Actor   *engine.Actor   `json:"actor,omitempty"`
	// Values are the other fields' stored values (PrepareUpdate).
	Values  map[string]any `json:"values,omitempty"`
	Changes []fieldChange  `json:"changes"`
	// Files are the metadata of the blobs Changes add.
	Files []fileMeta `json:"files,omitempty"`
	// Count answers the number of files removed instead of the row.
	Count bool `json:"count,omitempty"`
	// Required refuses a change that leaves a required file field
	// without files (422, as for any required field). Commands proposed
	// before the check existed carry none and replay without it.
	Required bool `json:"required,omitempty"`
	// RestoreSince is the oldest deletion time (unix seconds, exclusive)
	// of a file Restore may bring back: the proposer's clock less the
	// grace period, plus a margin (restore.go).
	RestoreSince int64 `json:"restore_since,omitempty"`
	// Mods are the write modifiers of a multipart update's plain values
	// ("views+"), applied to the row read at apply (ApplyModifiers); only
	// a cmdChangeMods carries them.
	Mods []engine.FieldMod `json:"mods,omitempty"`
}

// createCmd creates a record with its files: Create holds every field's
// value, the file fields' names included.
type createCmd struct {
	Coll   string               `json:"coll"`
	Ver    int64                `json:"ver"`
	Create *engine.RecordCreate `json:"create"`
	Files  []fileMeta           `json:"files"`
}

// applyChange: the record as the caller may change it (view and update
// rules, If-Match), the new names of each field, the metadata of the new
// files, then the row; the record-write hook turns the names that left
// into tombstones (hooks.go).
func (m *Files) applyChange(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[changeCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := m.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	rs := m.core.Records()
	old, err := rs.RowForWrite(tx, ci, c.ID, c.Admin, ci.UpdateRule, c.IfMatch, c.Env)
	if err != nil {
		return nil, err
	}
	values := make(map[string]any, len(c.Values)+len(c.Changes))
	for k, v := range c.Values {
		values[k] = v
	}
	if cmd.Type == cmdChangeMods && len(c.Mods) > 0 {
		if values, err = engine.ApplyModifiers(ci, old, values, c.Mods); err != nil {
			return nil, err
		}
	}
	for _, ch := range c.Changes {
		f, i := fieldByID(ci, ch.Field)
		if f == nil {
			return nil, fmt.Errorf("%w: files.change: no file field %s in %s", fsm.ErrHalt, ch.Field, ci.Name)
		}
		current := storedNames(old[3+i])
		for _, n := range ch.Remove {
			if !contains(current, n) {
				return nil, errNoFile
			}
		}
		names := applyFieldChange(current, ch)
		if names, err = restoreNames(tx, ci.ID, c.ID, f.ID, current, names, ch.Restore, c.RestoreSince); err != nil {
			return nil, err
		}
		if !f.Multiple && len(names) > 1 {
			return nil, errSecondFile(f.Name)
		}
		if c.Required && f.Required && len(names) == 0 {
			return nil, engine.FieldError(f.Name, msgBlank)
		}
		values[f.Name] = storedValue(f.Multiple, names)
		// The files that leave are tombstoned at the command's time (the
		// record's updated time may run ahead of it).
		for _, n := range current {
			if !contains(names, n) {
				if err := tombstone(tx, c.Now, `name = ?`, n); err != nil {
					return nil, err
				}
			}
		}
	}
	prev := engine.AsInt64(old[2])
	updated := max(c.Now, prev+1)
	sets, args, err := rs.ValueSets(tx, ci, values, []string{"updated = ?"}, []any{updated})
	if err != nil {
		return nil, err
	}
	if err := insertFiles(tx, ci.ID, c.ID, c.Files, c.Now); err != nil {
		return nil, err
	}
	args = append(args, c.ID)
	q := "UPDATE " + ci.Table() + " SET " + strings.Join(sets, ", ") + " WHERE id = ? RETURNING " + ci.SelectCols()
	row, err := ci.ScanRow(tx.QueryRow(q, args...).Scan)
	if err != nil {
		return nil, engine.UniqueError(ci, err)
	}
	if err := m.core.RecordWritten(tx, engine.EvRecordUpdate, ci, row, updated, c.Actor); err != nil {
		return nil, err
	}
	if c.Count {
		return removedAnswer(old, row, c.Changes, ci), nil
	}
	return engine.Row(row), nil
}

// applyCreate creates the record (the create rule sees its file names)
// and writes its files' metadata.
func (m *Files) applyCreate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[createCmd](cmd)
	if err != nil {
		return nil, err
	}
	if c.Create == nil {
		return nil, fmt.Errorf("%w: files.create without a record", fsm.ErrHalt)
	}
	ci, err := m.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	row, err := m.core.Records().ApplyRecordCreateRow(tx, ci, c.Create)
	if err != nil {
		return nil, err
	}
	if err := insertFiles(tx, ci.ID, c.Create.ID(), c.Files, engine.AsInt64(row[1])); err != nil {
		return nil, err
	}
	return engine.Row(row), nil
}

// applyFieldChange is names after ch.
func applyFieldChange(names []string, ch fieldChange) []string {
	if ch.Clear {
		names = nil
	}
	if len(ch.Remove) > 0 {
		drop := make(map[string]bool, len(ch.Remove))
		for _, n := range ch.Remove {
			drop[n] = true
		}
		kept := names[:0:0]
		for _, n := range names {
			if !drop[n] {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	return append(names, ch.Add...)
}

// storedNames reads the names a file field's stored value holds: one name
// (single) or a JSON array of names (multiple).
func storedNames(v any) []string {
	s := engine.AsString(v)
	if s == "" {
		return nil
	}
	if strings.HasPrefix(s, "[") {
		var out []string
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
		return nil
	}
	return []string{s}
}

// storedValue is the stored value of names: nil when empty, the name of a
// single field, the compact JSON array of a multiple one.
func storedValue(multiple bool, names []string) any {
	if len(names) == 0 {
		return nil
	}
	if !multiple {
		return names[0]
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// msgBlank refuses a change that leaves a required file field without
// files: the message of any blank required field (422).
const msgBlank = "cannot be blank"

// errSecondFile answers a second file for a single-file field (SPEC.md:
// 400).
func errSecondFile(field string) *engine.Error {
	return &engine.Error{Kind: engine.KindBadRequest, Message: fmt.Sprintf("The field %s holds one file; send one", field),
		Details: map[string]any{field: "holds a single file"}}
}
