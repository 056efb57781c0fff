package auth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"

	"svcd/engine"
	"svcd/engine/password"
	"svcd/fsm"
)

// Rehash on sign-in. Accounts imported from PocketBase keep their bcrypt
// hashes (password.VerifyAny accepts them); the first successful sign-in
// replaces the hash with argon2id through the log. The proposing node
// hashes (argon2id never runs in the state machine); the command carries
// a digest of the hash the password matched, and applies only while the
// account still has that hash, so a password changed meanwhile is never
// overwritten. It changes the stored format, not the account: updated,
// sessions and events are left alone.

// cmdRehashPassword: the first number after the modules' ranges
// (engine/DESIGN.md); 157-159 are kept for the auth module.
const cmdRehashPassword fsm.Type = 155

type rehashCmd struct {
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	Old    string `json:"old"`
	Hash   string `json:"hash"`
}

// hashDigest names a stored password hash without repeating it.
func hashDigest(hash string) string {
	sum := sha256.Sum256([]byte(hash))
	return hex.EncodeToString(sum[:16])
}

// verifyUserPassword checks plain against the account's stored hash and,
// when it matched a bcrypt hash, stores argon2id in its place. A failed
// rehash is logged; the sign-in stands.
func (au *Auth) verifyUserPassword(ctx context.Context, ci *engine.Coll, id, plain, hash string) bool {
	ok, rehash, err := password.VerifyAny(plain, hash)
	if err != nil || !ok {
		return false
	}
	if rehash {
		if err := au.rehashUser(ctx, ci, id, plain, hash); err != nil {
			au.core.Logger().Warn("password rehash", "collection", ci.Name, "id", id, "err", err)
		}
	}
	return true
}

func (au *Auth) rehashUser(ctx context.Context, ci *engine.Coll, id, plain, old string) error {
	h, err := password.Hash(plain, au.core.PasswordParams())
	if err != nil {
		return err
	}
	_, _, err = au.core.Propose(ctx, cmdRehashPassword, rehashCmd{Coll: ci.ID, UserID: id, Old: hashDigest(old), Hash: h})
	return err
}

func (au *Auth) applyRehashPassword(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[rehashCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, nil // the collection is gone: nothing to rehash
	}
	var stored string
	err = tx.QueryRow("SELECT coalesce(password, '') FROM "+ci.Table()+" WHERE id = ?", c.UserID).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && hashDigest(stored) != c.Old) {
		return nil, nil // the account or its password changed since the sign-in
	}
	if err != nil {
		return nil, err
	}
	_, err = tx.Exec("UPDATE "+ci.Table()+" SET password = ? WHERE id = ?", c.Hash, c.UserID)
	return nil, err
}

// cmdRehashAdminPassword is cmdRehashPassword for an admin (PocketBase's
// superusers become admins with their bcrypt hashes).
const cmdRehashAdminPassword fsm.Type = 156

// evAdminHash reloads the admins' cache without touching their sessions
// (evAdmins would: a new hash is not a new password).
const evAdminHash = "admin_hash"

type adminRehashCmd struct {
	ID   string `json:"id"`
	Old  string `json:"old"`
	Hash string `json:"hash"`
}

// verifyAdminPassword is verifyUserPassword for admin a.
func (ad *Admins) verifyAdminPassword(ctx context.Context, a *Admin, plain string) bool {
	ok, rehash, err := password.VerifyAny(plain, a.hash)
	if err != nil || !ok {
		return false
	}
	if rehash {
		h, err := password.Hash(plain, ad.au.core.PasswordParams())
		if err == nil {
			_, _, err = ad.au.core.Propose(ctx, cmdRehashAdminPassword, adminRehashCmd{ID: a.ID, Old: hashDigest(a.hash), Hash: h})
		}
		if err != nil {
			ad.au.core.Logger().Warn("admin password rehash", "id", a.ID, "err", err)
		}
	}
	return true
}

func (ad *Admins) applyRehashAdminPassword(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[adminRehashCmd](cmd)
	if err != nil {
		return nil, err
	}
	var stored string
	err = tx.QueryRow(`SELECT password FROM _svc_admins WHERE id = ?`, c.ID).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && hashDigest(stored) != c.Old) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`UPDATE _svc_admins SET password = ? WHERE id = ?`, c.Hash, c.ID); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evAdminHash, Subject: c.ID})
	return nil, nil
}
