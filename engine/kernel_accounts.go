package engine

import (
	"context"

	"svcd/engine/password"
)

// What modules that keep accounts (engine/auth) use of the core's records:
// an auth collection's accounts are its records, written through the
// core's record commands or, inside a module's own command, through the
// primitives below, which keep the record-write funnel (RecordWritten)
// and the rule checks in one place.

// RowIndex is where column name sits in a row read with SelectCols (-1
// when the collection has no such column).
func (ci *Coll) RowIndex(name string) int { return ci.rowIndex(name) }

// Table is the collection's quoted table name.
func (ci *Coll) Table() string { return ci.table }

// SelectCols is the column list of a full row, in row order.
func (ci *Coll) SelectCols() string { return ci.selectCols }

// ScanRow scans a full row (SelectCols) into stored values.
func (ci *Coll) ScanRow(scan func(dest ...any) error) ([]any, error) { return ci.scanRow(scan) }

// EmptyValue is the stored empty value of the field's type.
func (f *FieldInfo) EmptyValue() any {
	v, _ := f.typ.Normalize(f.Field, nil)
	return v
}

// PasswordParams are the argon2id costs of new password hashes.
func (e *Engine) PasswordParams() password.Params { return e.pwParams }

// DecodeBody parses a JSON object body of a record write.
func DecodeBody(body []byte) (map[string]any, error) { return decodeBody(body) }

// UpdateEnv is the rule environment of p's update of a record of ci with
// body (the request's fields) and the prepared values.
func (rs *Records) UpdateEnv(p Principal, ci *Coll, body, values map[string]any, now int64) *RuleEnv {
	return rs.e.envFor(p, ci, bodyEnv(ci, body, func(i int) any { return values[ci.fields[i].Name] }), now)
}

// PreWriteError is the part of a write decision that needs no row:
// admin-only write rules (403) and admin-only view rules (404).
func PreWriteError(ci *Coll, rule *string, admin bool) error { return preWriteError(ci, rule, admin) }

// UniqueError maps a unique violation to a 422 on the field (other errors
// are returned as they are).
func UniqueError(ci *Coll, err error) error { return uniqueError(ci, err) }

// IsUniqueViolation reports a SQLite unique constraint failure.
func IsUniqueViolation(err error) bool { return isUniqueViolation(err) }

// UniqueViolationColumn is the column a unique violation names ("" if
// none).
func UniqueViolationColumn(err error) string { return uniqueViolationColumn(err) }

// CreateAccount commits the creation of record id of auth collection ci
// with values already in stored form (in RowFields order), as an admin
// would (no create rule): the stored row.
func (rs *Records) CreateAccount(ctx context.Context, ci *Coll, id string, now int64, values []any) (Row, uint64, error) {
	res, idx, err := rs.e.Propose(ctx, cmdRecordCreate, rs.AccountCreate(ci, id, now, values).cmd)
	if err != nil {
		return nil, idx, err
	}
	return res.(Row), idx, nil
}

// AccountCreate is what CreateAccount commits, for a module that creates
// the account inside its own command (ApplyRecordCreateRow), together
// with its own rows. The values are stored as given: encrypted fields
// are not sealed, so a module leaves them empty.
func (rs *Records) AccountCreate(ci *Coll, id string, now int64, values []any) *RecordCreate {
	return &RecordCreate{cmd: recordCreateCmd{Coll: ci.ID, Ver: ci.Version, Admin: true, ID: id, Now: now, Values: values}}
}
