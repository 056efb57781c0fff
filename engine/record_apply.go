package engine

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"svcd/engine/filter"
	"svcd/engine/schema"
	"svcd/fsm"
)

type recordCreateCmd struct {
	Coll  string `json:"coll"`
	Ver   int64  `json:"ver"`
	Admin bool   `json:"admin"`
	ID    string `json:"id"`
	Now   int64  `json:"now"`
	// Values holds the stored value of every field, in the order of the
	// collection's fields at version Ver.
	Values []any    `json:"values"`
	Env    *RuleEnv `json:"env,omitempty"`
	Actor  *Actor   `json:"actor,omitempty"`
}

type recordUpdateCmd struct {
	Coll    string         `json:"coll"`
	Ver     int64          `json:"ver"`
	Admin   bool           `json:"admin"`
	ID      string         `json:"id"`
	Now     int64          `json:"now"`
	Values  map[string]any `json:"values"`
	IfMatch string         `json:"if_match,omitempty"`
	Env     *RuleEnv       `json:"env,omitempty"`
	Actor   *Actor         `json:"actor,omitempty"`
	// Account applies the rules of account fields (account_fields.go);
	// commands proposed before they existed replay without them.
	Account bool `json:"account,omitempty"`
	// PasswordWas is the digest of the password hash oldPassword matched.
	PasswordWas string `json:"password_was,omitempty"`
	// Mods are write modifiers ("views+": 1), applied to the row read in
	// the transaction (record_modifiers.go).
	Mods []FieldMod `json:"mods,omitempty"`
}

type recordDeleteCmd struct {
	Coll    string `json:"coll"`
	Ver     int64  `json:"ver"`
	Admin   bool   `json:"admin"`
	ID      string `json:"id"`
	IfMatch string `json:"if_match,omitempty"`
	// Now is the proposer's clock, for the updated time of records whose
	// relation to the deleted record is removed.
	Now   int64    `json:"now"`
	Env   *RuleEnv `json:"env,omitempty"`
	Actor *Actor   `json:"actor,omitempty"`
}

// RecordChange is the payload of record events.
type RecordChange struct {
	CollectionID   string
	CollectionName string
	Row            []any

	// filter is the row named for the in-memory evaluator, computed once
	// for every subscriber (per collection version).
	filter atomic.Pointer[changeFilter]
}

type changeFilter struct {
	ci  *Coll
	rec filter.Record
}

// filterRecordFor is the change's row named for ci, shared by every
// realtime delivery of the change (read-only).
func (ch *RecordChange) filterRecordFor(ci *Coll) filter.Record {
	if f := ch.filter.Load(); f != nil && f.ci == ci {
		return f.rec
	}
	rec := filterRecord(ci, ch.Row)
	ch.filter.Store(&changeFilter{ci: ci, rec: rec})
	return rec
}

// storedFromCommand turns a command's value back into the stored form for
// a column: the inverse of encoding the prepared values. A JSON payload
// gives json.Number for numbers and base64 text for blobs; a binary one
// (cmd_binary.go) gives int64, float64 and []byte, converted here exactly
// as their JSON text would be, so both forms store the same.
func storedFromCommand(col schema.Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch col {
	case schema.ColInteger:
		switch n := v.(type) {
		case json.Number:
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
			return n.Float64()
		case int64:
			return n, nil
		case float64:
			// As its JSON text: an integer when that text (shortest
			// digits, no fraction below 1e21) parses as one.
			text, err := json.Marshal(n)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", fsm.ErrHalt, err)
			}
			return storedFromCommand(col, json.Number(text))
		}
	case schema.ColReal:
		switch n := v.(type) {
		case json.Number:
			return n.Float64()
		case float64:
			return n, nil
		case int64:
			return float64(n), nil
		}
	case schema.ColText:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case schema.ColBlob:
		switch b := v.(type) {
		case string:
			return base64.StdEncoding.DecodeString(b)
		case []byte:
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w: value %T does not fit a %s column", fsm.ErrHalt, v, col)
}

func (rs *Records) applyRecordCreate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[recordCreateCmd](cmd)
	if err != nil {
		return nil, err
	}
	row, err := rs.recordCreate(tx, c)
	if err != nil {
		return nil, err
	}
	return Row(row), nil
}

// recordCreate applies one create (alone or as a batch entry) and returns
// the stored row.
func (rs *Records) recordCreate(tx *fsm.Tx, c *recordCreateCmd) ([]any, error) {
	ci, err := rs.e.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	return rs.recordCreateIn(tx, ci, c)
}

// recordCreateIn is recordCreate in ci, which the caller resolved for
// c's collection and version in this transaction.
func (rs *Records) recordCreateIn(tx *fsm.Tx, ci *Coll, c *recordCreateCmd) ([]any, error) {
	if ci.Type == schema.TypeView {
		return nil, errViewWrite
	}
	if !c.Admin && ci.CreateRule == nil {
		return nil, ErrAdminOnly
	}
	if len(c.Values) != len(ci.fields) {
		return nil, fmt.Errorf("%w: %d values for %d fields", fsm.ErrHalt, len(c.Values), len(ci.fields))
	}
	args := make([]any, 0, 3+len(ci.fields))
	args = append(args, c.ID, c.Now, c.Now)
	for i, f := range ci.fields {
		v, err := storedFromCommand(f.typ.Column(f.Field), c.Values[i])
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	if err := rs.checkRelations(tx, ci, func(i int) any { return c.Values[i] }); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ci.insertSQL, args...); err != nil {
		return nil, uniqueError(ci, err)
	}
	// The stored row is the arguments: storedFromCommand gave every value
	// its column's type as SQLite's affinity would (TestCreateAnswerIsTheStoredRecord),
	// so reading the row back (RETURNING cost a third of a bulk row's
	// apply) would return the same values.
	row := args
	// The create rule sees the new record as it would be stored; refusing
	// rolls the insert back with the command.
	if ok, err := rs.e.ruleHolds(tx, ci, ci.CreateRule, c.Admin, c.Env, c.ID); err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return nil, ErrForbidden
	}
	if err := rs.e.RecordWritten(tx, EvRecordCreate, ci, row, c.Now, c.Actor); err != nil {
		return nil, err
	}
	return row, nil
}

// uniqueError maps a unique violation to a 422 on the field (or the id).
func uniqueError(ci *Coll, err error) error {
	if !isUniqueViolation(err) {
		return err
	}
	col := uniqueViolationColumn(err)
	if col == "" {
		col = "id"
	}
	for _, f := range ci.fields {
		if strings.EqualFold(f.Name, col) {
			return FieldError(f.Name, "must be unique")
		}
	}
	if col == "id" {
		return FieldError("id", "a record with this id already exists")
	}
	return FieldError(col, "must be unique")
}

// checkRelations verifies that every referenced record exists now; value
// returns the command's value of field i (nil when absent).
func (rs *Records) checkRelations(tx *fsm.Tx, ci *Coll, value func(i int) any) error {
	for i, f := range ci.fields {
		if f.Type != schema.FieldRelation {
			continue
		}
		v, ok := value(i).(string)
		if !ok || v == "" {
			continue
		}
		ids := []string{v}
		if f.Multiple {
			ids = nil
			if err := json.Unmarshal([]byte(v), &ids); err != nil {
				return fmt.Errorf("%w: relation value: %v", fsm.ErrHalt, err)
			}
		}
		if len(ids) == 0 {
			continue
		}
		var target string
		err := tx.QueryRow(`SELECT name FROM _svc_collections WHERE id = ?`, f.Collection).Scan(&target)
		if errors.Is(err, sql.ErrNoRows) {
			return FieldError(f.Name, "relation target collection does not exist")
		}
		if err != nil {
			return err
		}
		sorted := append([]string(nil), ids...)
		sort.Strings(sorted)
		args := make([]any, len(sorted))
		for i, id := range sorted {
			args[i] = id
		}
		var n int
		q := "SELECT count(*) FROM " + quoteIdent(target) + " WHERE id IN (?" + strings.Repeat(", ?", len(args)-1) + ")"
		if err := tx.QueryRow(q, args...).Scan(&n); err != nil {
			return err
		}
		if n != len(ids) {
			return FieldError(f.Name, "references a record that does not exist")
		}
	}
	return nil
}

// loadRowForWrite reads the current row and applies the visibility and
// write rules and the If-Match precondition.
func (rs *Records) loadRowForWrite(tx *fsm.Tx, ci *Coll, id string, admin bool, rule *string, ifMatch string, env *RuleEnv) ([]any, error) {
	row, err := ci.scanRow(tx.QueryRow("SELECT "+ci.selectCols+" FROM "+ci.table+" WHERE id = ?", id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := rs.WriteRuleError(tx, ci, rule, admin, env, id); err != nil {
		return nil, err
	}
	if ifMatch != "" {
		tag, err := etagTx(tx, ci, row)
		if err != nil {
			return nil, err
		}
		if !ETagMatches(ifMatch, tag) {
			return nil, &Error{Kind: KindPrecondition, Message: "The record changed (If-Match failed)", ETag: tag}
		}
	}
	return row, nil
}

// WriteRuleError decides, at apply time, an update or delete of record id
// of ci by a non-admin under rule (as the record commands do).
func (rs *Records) WriteRuleError(tx *fsm.Tx, ci *Coll, rule *string, admin bool, env *RuleEnv, id string) error {
	if err := preWriteError(ci, rule, admin); err != nil {
		return err
	}
	if admin {
		return nil
	}
	if ok, err := rs.e.ruleHolds(tx, ci, ci.ViewRule, false, env, id); err != nil || !ok {
		if err != nil {
			return err
		}
		return ErrNotFound
	}
	if ok, err := rs.e.ruleHolds(tx, ci, rule, false, env, id); err != nil || !ok {
		if err != nil {
			return err
		}
		return ErrForbidden
	}
	return nil
}

// preWriteError is the part of the write decision that needs no row:
// admin-only write rules (403) and admin-only view rules (404).
func preWriteError(ci *Coll, rule *string, admin bool) error {
	switch {
	case admin:
		return nil
	case rule == nil:
		return ErrAdminOnly
	case ci.ViewRule == nil:
		return ErrNotFound
	}
	return nil
}

// ETagMatches reports whether an If-Match or If-None-Match header matches
// the current tag (weak comparison over a list; "*" matches anything).
func ETagMatches(header, current string) bool {
	strip := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, t := range strings.Split(header, ",") {
		if t = strings.TrimSpace(t); t == "*" || strip(t) == strip(current) {
			return true
		}
	}
	return false
}

func (rs *Records) applyRecordUpdate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[recordUpdateCmd](cmd)
	if err != nil {
		return nil, err
	}
	row, err := rs.recordUpdate(tx, c)
	if err != nil {
		return nil, err
	}
	return Row(row), nil
}

// recordUpdate applies one update (alone or as a batch entry) and returns
// the stored row.
func (rs *Records) recordUpdate(tx *fsm.Tx, c *recordUpdateCmd) ([]any, error) {
	ci, err := rs.e.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	if ci.Type == schema.TypeView {
		return nil, errViewWrite
	}
	old, err := rs.loadRowForWrite(tx, ci, c.ID, c.Admin, ci.UpdateRule, c.IfMatch, c.Env)
	if err != nil {
		return nil, err
	}
	prev, _ := old[2].(int64)
	updated := max(c.Now, prev+1)
	sets := []string{"updated = ?"}
	args := []any{updated}
	values := c.Values
	if len(c.Mods) > 0 {
		if values, err = applyModifiers(ci, old, values, c.Mods); err != nil {
			return nil, err
		}
	}
	sets, args, err = rs.ValueSets(tx, ci, values, sets, args)
	if err != nil {
		return nil, err
	}
	if sets, args, err = accountSets(ci, old, c, sets, args); err != nil {
		return nil, err
	}
	args = append(args, c.ID)
	q := "UPDATE " + ci.table + " SET " + strings.Join(sets, ", ") + " WHERE id = ? RETURNING " + ci.selectCols
	row, err := ci.scanRow(tx.QueryRow(q, args...).Scan)
	if err != nil {
		return nil, uniqueError(ci, err)
	}
	if err := rs.e.RecordWritten(tx, EvRecordUpdate, ci, row, updated, c.Actor); err != nil {
		return nil, err
	}
	return row, nil
}

func (rs *Records) applyRecordDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[recordDeleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	return nil, rs.recordDelete(tx, c)
}

// recordDelete applies one delete (alone or as a batch entry).
func (rs *Records) recordDelete(tx *fsm.Tx, c *recordDeleteCmd) error {
	ci, err := rs.e.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return err
	}
	if ci.Type == schema.TypeView {
		return errViewWrite
	}
	old, err := rs.loadRowForWrite(tx, ci, c.ID, c.Admin, ci.DeleteRule, c.IfMatch, c.Env)
	if err != nil {
		return err
	}
	d := &deletion{e: rs.e, tx: tx, now: c.Now, actor: c.Actor, seen: map[string]bool{}}
	return d.delete(ci, old)
}

// ValueSets appends the "col = ?" fragments and arguments that store
// values (from PrepareUpdate) in a record of ci.
func (rs *Records) ValueSets(tx *fsm.Tx, ci *Coll, values map[string]any, sets []string, args []any) ([]string, []any, error) {
	for _, f := range ci.fields {
		raw, ok := values[f.Name]
		if !ok {
			continue
		}
		v, err := storedFromCommand(f.typ.Column(f.Field), raw)
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, f.col+" = ?")
		args = append(args, v)
	}
	if err := rs.checkRelations(tx, ci, func(i int) any { return values[ci.fields[i].Name] }); err != nil {
		return nil, nil, err
	}
	return sets, args, nil
}
