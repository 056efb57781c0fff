package auth

import (
	"context"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// An account's passkeys, for its own user token: the list, a new name,
// and removal. Another account's passkey, or one that does not exist, is
// 404 alike.

// owner resolves the caller of the credential endpoints.
func (pk *Passkeys) owner(ctx context.Context, p engine.Principal, name string) (*engine.Coll, string, error) {
	ci, err := pk.feature(name)
	if err != nil {
		return nil, "", err
	}
	row, err := pk.au.ownUser(ctx, p, ci)
	if err != nil {
		return nil, "", err
	}
	return ci, engine.AsString(row[0]), nil
}

// ListPasskeys lists the caller's passkeys, oldest first.
func (pk *Passkeys) ListPasskeys(ctx context.Context, p engine.Principal, name string) ([]Passkey, error) {
	ci, uid, err := pk.owner(ctx, p, name)
	if err != nil {
		return nil, err
	}
	return pk.passkeysOf(ctx, ci.ID, uid)
}

type passkeyRenameCmd struct {
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	ID     string `json:"id"`
	Name   string `json:"name"`
}

// RenamePasskey gives the caller's passkey id a new name.
func (pk *Passkeys) RenamePasskey(ctx context.Context, p engine.Principal, name, id, label string) (*Passkey, uint64, error) {
	ci, uid, err := pk.owner(ctx, p, name)
	if err != nil {
		return nil, 0, err
	}
	if strings.TrimSpace(label) == "" {
		return nil, 0, engine.FieldError("name", "cannot be blank")
	}
	if label, err = passkeyName(label); err != nil {
		return nil, 0, err
	}
	if err := pk.mustExist(ctx, ci.ID, uid, id); err != nil {
		return nil, 0, err
	}
	_, idx, err := pk.au.core.Propose(ctx, cmdPasskeyRename, passkeyRenameCmd{Coll: ci.ID, UserID: uid, ID: id, Name: label})
	if err != nil {
		return nil, idx, err
	}
	out, err := pk.passkeyByID(ctx, ci.ID, uid, id)
	if err == nil && out == nil {
		err = errPasskeyUnknown // deleted meanwhile
	}
	return out, idx, err
}

func (pk *Passkeys) applyRename(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[passkeyRenameCmd](cmd)
	if err != nil {
		return nil, err
	}
	res, err := tx.Exec(`UPDATE _svc_webauthn_credentials SET name = ? WHERE id = ? AND coll = ? AND user_id = ?`,
		c.Name, c.ID, c.Coll, c.UserID)
	return nil, oneRow(res, err)
}

type passkeyDeleteCmd struct {
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	ID     string `json:"id"`
}

// DeletePasskey removes the caller's passkey id. Sessions it opened stay
// (log them out, or reset the password, to end them).
func (pk *Passkeys) DeletePasskey(ctx context.Context, p engine.Principal, name, id string) (uint64, error) {
	ci, uid, err := pk.owner(ctx, p, name)
	if err != nil {
		return 0, err
	}
	if err := pk.mustExist(ctx, ci.ID, uid, id); err != nil {
		return 0, err
	}
	_, idx, err := pk.au.core.Propose(ctx, cmdPasskeyDelete, passkeyDeleteCmd{Coll: ci.ID, UserID: uid, ID: id})
	return idx, err
}

func (pk *Passkeys) applyDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[passkeyDeleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	res, err := tx.Exec(`DELETE FROM _svc_webauthn_credentials WHERE id = ? AND coll = ? AND user_id = ?`, c.ID, c.Coll, c.UserID)
	return nil, oneRow(res, err)
}

// mustExist answers 404 before proposing anything when account uid has
// no passkey id on this replica (the apply checks again).
func (pk *Passkeys) mustExist(ctx context.Context, coll, uid, id string) error {
	p, err := pk.passkeyByID(ctx, coll, uid, id)
	if err == nil && p == nil {
		return errPasskeyUnknown
	}
	return err
}

// oneRow turns a statement that changed no passkey into 404.
func oneRow(res interface{ RowsAffected() (int64, error) }, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		return errPasskeyUnknown
	}
	return err
}
