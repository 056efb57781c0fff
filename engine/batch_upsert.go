package engine

import (
	"context"
	"database/sql"
	"errors"

	"svcd/fsm"
)

// BatchUpsert is PocketBase's upsert entry (PUT on a collection's records
// URL, the id in the body): it updates the record with that id when it
// exists, creates it otherwise. The choice is made at apply, inside the
// batch's transaction, so a record another writer creates between the
// request and the apply turns the entry into an update. An entry whose
// body names no id is a create.
const BatchUpsert BatchAction = "upsert"

// cmdBatchUpsert is a batch holding at least one upsert entry, or an
// update with write modifiers ("views+"): the same payload as cmdBatch,
// under its own type so a binary that does not know the upsert member or
// the modifiers stops on the entry instead of applying it without them.
const cmdBatchUpsert fsm.Type = 169

// recordUpsertCmd is one upsert entry: the create and the update it may
// become, each prepared as its single command would be. A part the caller
// may not do (its rule, or a body that does not validate for it) is nil,
// its error kept in CreateErr or UpdateErr: the apply answers it only if
// the record's state makes that part the one to run.
type recordUpsertCmd struct {
	Coll      string           `json:"coll"`
	Ver       int64            `json:"ver"`
	ID        string           `json:"id"`
	Create    *recordCreateCmd `json:"create,omitempty"`
	Update    *recordUpdateCmd `json:"update,omitempty"`
	CreateErr *Error           `json:"create_err,omitempty"`
	UpdateErr *Error           `json:"update_err,omitempty"`
}

// prepareUpsert prepares both parts of an upsert of in's id. It fails
// only when neither part can run; a create with no id in the body is a
// plain create.
func (rs *Records) prepareUpsert(ctx context.Context, p Principal, op BatchOp, in map[string]any, now int64, shared *batchShared) (batchOpCmd, error) {
	create := op
	create.Action = BatchCreate
	id, _ := in["id"].(string)
	if id == "" {
		return rs.prepareBatchOp(ctx, p, create, in, now, shared)
	}
	ci, err := rs.writable(op.Collection)
	if err != nil {
		return batchOpCmd{}, err
	}
	u := &recordUpsertCmd{Coll: ci.ID, Ver: ci.Version, ID: id}
	c, err := rs.prepareBatchOp(ctx, p, create, in, now, shared)
	if err != nil {
		if u.CreateErr = AsError(err); u.CreateErr == nil {
			return batchOpCmd{}, err
		}
	} else {
		u.Create = c.Create
	}
	patch := make(map[string]any, len(in))
	for k, v := range in {
		if k != "id" {
			patch[k] = v
		}
	}
	update := op
	update.Action, update.ID = BatchUpdate, id
	c, err = rs.prepareBatchOp(ctx, p, update, patch, now, shared)
	switch {
	case err == nil:
		u.Update = c.Update
	case errors.Is(err, ErrNotFound) && u.Create != nil:
		// verifyOldPassword found no record: the create runs, unless one
		// appears before the apply, which then refuses the update.
		u.UpdateErr = AsError(ErrNotFound)
	default:
		if u.UpdateErr = AsError(err); u.UpdateErr == nil {
			return batchOpCmd{}, err
		}
	}
	if u.Create == nil && u.Update == nil {
		return batchOpCmd{}, u.CreateErr
	}
	return batchOpCmd{Upsert: u}, nil
}

// applyUpsert runs the update when the record exists in the batch's
// transaction, the create when it does not, and reports which ran.
func (rs *Records) applyUpsert(tx *fsm.Tx, u *recordUpsertCmd, colls *batchColls) (body []byte, created bool, err error) {
	ci, err := colls.get(tx, rs.e, u.Coll, u.Ver)
	if err != nil {
		return nil, false, err
	}
	var one int
	err = tx.QueryRow("SELECT 1 FROM "+ci.table+" WHERE id = ?", u.ID).Scan(&one)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, false, err
	}
	if exists {
		if u.Update == nil {
			return nil, false, u.UpdateErr
		}
		row, err := rs.recordUpdate(tx, u.Update)
		if err != nil {
			return nil, false, err
		}
		return rs.renderRow(tx, u.Update.Coll, u.Update.Ver, row, u.Update.Admin), false, nil
	}
	if u.Create == nil {
		return nil, false, u.CreateErr
	}
	row, err := rs.recordCreateIn(tx, ci, u.Create)
	if err != nil {
		return nil, false, err
	}
	return rs.renderRow(tx, u.Create.Coll, u.Create.Ver, row, u.Create.Admin), true, nil
}

// upsertKind is the hook event an upsert entry is intercepted as: an
// update when the record exists on this replica now, a create otherwise
// (hooks run before the proposal; the apply decides again).
func (rs *Records) upsertKind(ctx context.Context, coll, id string) string {
	ci := rs.e.Coll(coll)
	if ci == nil || id == "" {
		return EvRecordCreate
	}
	found := false
	_ = rs.e.store.View(ctx, func(r *fsm.Reader) error {
		var one int
		found = r.QueryRow("SELECT 1 FROM "+ci.table+" WHERE id = ?", id).Scan(&one) == nil
		return nil
	})
	if found {
		return EvRecordUpdate
	}
	return EvRecordCreate
}

// needsUpsertType reports whether a batch command must be a
// cmdBatchUpsert: it holds an upsert entry, or an update with write
// modifiers.
func (c batchCmd) needsUpsertType() bool {
	for _, op := range c.Ops {
		if op.Upsert != nil || (op.Update != nil && len(op.Update.Mods) > 0) {
			return true
		}
	}
	return false
}
