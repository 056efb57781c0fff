package engine

import (
	"context"
	"database/sql"
	"errors"

	"svcd/engine/schema"
	"svcd/fsm"
)

// writable returns the collection for a record write, or the error.
func (e *Engine) writable(name string) (*collInfo, error) {
	ci := e.collection(name)
	if ci == nil {
		return nil, errNotFound
	}
	if ci.Type == schema.TypeView {
		return nil, errViewWrite
	}
	return ci, nil
}

// createRuleError is the refusal of a create: 403 either way, worded for
// an admin-only collection when the rule is null.
func createRuleError(ci *collInfo) error {
	if ci.CreateRule == nil {
		return errAdminOnly
	}
	return errForbidden
}

// decodeBody parses a JSON object body for a record write.
func decodeBody(body []byte) (map[string]any, error) {
	var m map[string]any
	if err := decodeStrict(body, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, Errorf(KindBadRequest, "Expected a JSON object")
	}
	return m, nil
}

// CreateRecord validates body and creates a record in collection name.
func (e *Engine) CreateRecord(ctx context.Context, p Principal, name string, body []byte) (*Record, uint64, error) {
	in, err := decodeBody(body)
	if err != nil {
		return nil, 0, err
	}
	for attempt := 0; ; attempt++ {
		ci, err := e.writable(name)
		if err != nil {
			return nil, 0, err
		}
		if !ruleAllows(ci.CreateRule, p.IsAdmin()) {
			return nil, 0, createRuleError(ci)
		}
		now := e.now().Unix()
		id, values, verr := e.prepareCreate(ci, in, p.IsAdmin(), now)
		if verr != nil {
			return nil, 0, verr
		}
		res, idx, err := e.propose(ctx, cmdRecordCreate, recordCreateCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: p.IsAdmin(), ID: id, Now: now, Values: values,
		})
		if errors.Is(err, errSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		return ci.record(res.([]any), p.IsAdmin()), idx, nil
	}
}

// UpdateRecord applies a partial change. ifMatch, when set, must match the
// record's current ETag at apply time.
func (e *Engine) UpdateRecord(ctx context.Context, p Principal, name, id string, body []byte, ifMatch string) (*Record, uint64, error) {
	in, err := decodeBody(body)
	if err != nil {
		return nil, 0, err
	}
	for attempt := 0; ; attempt++ {
		ci, err := e.writable(name)
		if err != nil {
			return nil, 0, err
		}
		// Answer a denied caller before validating, so a refusal never
		// reveals field names; the state machine decides again at apply.
		if err := writeRuleError(ci, ci.UpdateRule, p.IsAdmin()); err != nil {
			return nil, 0, err
		}
		now := e.now().Unix()
		values, verr := e.prepareUpdate(ci, in, p.IsAdmin(), now)
		if verr != nil {
			return nil, 0, verr
		}
		res, idx, err := e.propose(ctx, cmdRecordUpdate, recordUpdateCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: p.IsAdmin(), ID: id, Now: now, Values: values, IfMatch: ifMatch,
		})
		if errors.Is(err, errSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		return ci.record(res.([]any), p.IsAdmin()), idx, nil
	}
}

// DeleteRecord deletes one record.
func (e *Engine) DeleteRecord(ctx context.Context, p Principal, name, id, ifMatch string) (uint64, error) {
	for attempt := 0; ; attempt++ {
		ci, err := e.writable(name)
		if err != nil {
			return 0, err
		}
		if err := writeRuleError(ci, ci.DeleteRule, p.IsAdmin()); err != nil {
			return 0, err
		}
		_, idx, err := e.propose(ctx, cmdRecordDelete, recordDeleteCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: p.IsAdmin(), ID: id, IfMatch: ifMatch, Now: e.now().Unix(),
		})
		if errors.Is(err, errSchemaMoved) && attempt < 3 {
			continue
		}
		return idx, err
	}
}

// GetRecord reads one record from this replica; fields, when not empty,
// projects it like a list's fields parameter.
func (e *Engine) GetRecord(ctx context.Context, p Principal, name, id, fields string) (*Record, error) {
	ci := e.collection(name)
	if ci == nil {
		return nil, errNotFound
	}
	if !ruleAllows(ci.ViewRule, p.IsAdmin()) {
		if ci.ViewRule == nil {
			return nil, errAdminOnly
		}
		return nil, errNotFound
	}
	var row []any
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		var err error
		row, err = ci.scanRow(r.QueryRow("SELECT "+ci.selectCols+" FROM "+ci.table+" WHERE id = ?", id).Scan)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	rec := ci.record(row, p.IsAdmin())
	if proj := parseProjection(fields); proj != nil {
		rec.JSON = ci.appendRecord(rec.JSON[:0], row, p.IsAdmin(), proj)
	}
	return rec, nil
}
