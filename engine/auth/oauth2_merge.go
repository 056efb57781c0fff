package auth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"

	"svcd/engine"
	"svcd/engine/auth/oauth2"
	"svcd/engine/password"
	"svcd/fsm"
)

// A merge token links an identity to the existing account whose email
// the provider verified, once the account's owner proves the account:
// with its password (a first factor: an account with TOTP on then gets an
// MFA ticket), or by calling with a session of that account. Wrong
// passwords count against the token (the fifth burns it) and against the
// login lockout, as at the login route.
const mergeMaxAttempts = 5

// MergeRequest is POST /auth/:collection/oauth2/merge-confirm's body.
type MergeRequest struct {
	MergeToken string `json:"merge_token"`
	Password   string `json:"password"`
}

type oauth2MergeCmd struct {
	Hash   string `json:"hash"`
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	// PasswordDigest names the password hash the password was checked
	// against ("" for a session proof); the account must still have it.
	PasswordDigest string `json:"password_digest,omitempty"`
	// Wrong counts a wrong password.
	Wrong bool  `json:"wrong,omitempty"`
	Now   int64 `json:"now"`
}

// merge is a merge token's row.
type merge struct {
	userID, provider, subject, email string
	exp                              int64
}

// MergeConfirm links the identity of a merge token to its account once
// the caller proves the account (in.Password, or p signed in to it), and
// signs the account in. ip is the client address, for the lockout.
func (o *OAuth2) MergeConfirm(ctx context.Context, p engine.Principal, coll string, in MergeRequest, ip string) (*OAuth2Result, uint64, error) {
	ci, err := o.au.authCollection(coll)
	if err != nil {
		return nil, 0, err
	}
	if !o.au.authFeature(ci, "oauth2") {
		return nil, 0, errFeatureOff("OAuth2 sign-in")
	}
	if d := blankDetails("merge_token", in.MergeToken); len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	hash := o.au.macHex(keyOAuth2Merge, in.MergeToken)
	m, err := o.mergeRow(ctx, ci.ID, hash)
	if err != nil {
		return nil, 0, err
	}
	if m == nil || m.exp < o.au.core.Now().Unix() {
		return nil, 0, errBadMergeToken
	}
	cmd := oauth2MergeCmd{Hash: hash, Coll: ci.ID, UserID: m.userID, Now: o.au.core.Now().Unix()}
	bySession := p.Kind == engine.User && p.ID == m.userID && p.Claims != nil && p.Claims.ImpersonatedBy == "" &&
		o.au.core.Coll(p.Collection) != nil && o.au.core.Coll(p.Collection).ID == ci.ID
	switch {
	case bySession:
	case in.Password == "" && p.Kind == engine.User:
		return nil, 0, errOwnAccountOnly
	case in.Password == "":
		return nil, 0, engine.ValidationError(map[string]string{"password": "send the account's password, or call with a session of the account"})
	default:
		key := lockoutKey(ci.ID, m.email, ip)
		if d := o.au.lockedFor(ctx, key); d > 0 {
			return nil, 0, errLockedOut(d)
		}
		row, err := o.au.userByID(ctx, ci, m.userID)
		if err != nil || row == nil {
			return nil, 0, engine.FirstErr(err, errBadMergeToken)
		}
		hashed, _ := row[ci.RowIndex("password")].(string)
		ok := false
		if hashed == "" {
			password.Burn(in.Password, o.au.core.PasswordParams())
		} else {
			ok = o.au.verifyUserPassword(ctx, ci, engine.AsString(row[0]), in.Password, hashed)
		}
		if !ok {
			o.au.loginFailed(ctx, key)
			cmd.Wrong = true
			_, idx, err := o.au.core.Propose(ctx, cmdOAuth2Merge, cmd)
			return nil, idx, engine.FirstErr(err, ErrInvalidCreds)
		}
		o.au.loginSucceeded(ctx, key)
		cmd.PasswordDigest = digestOf(hashed)
	}
	res, idx, err := o.au.core.Propose(ctx, cmdOAuth2Merge, cmd)
	if err != nil {
		return nil, idx, err
	}
	switch outcomeOf(res).Status {
	case outLinked:
	case outTaken:
		return nil, idx, &engine.Error{Kind: engine.KindConflict, Message: "This " + m.provider + " identity is linked to another account"}
	case outHasOne:
		return nil, idx, &engine.Error{Kind: engine.KindConflict, Message: "The account is linked to another " + m.provider + " identity; unlink it first"}
	case "wrong":
		return nil, idx, ErrInvalidCreds
	default:
		return nil, idx, errBadMergeToken
	}
	s, err := o.session(ctx, ci, m.userID, !bySession)
	if err != nil {
		return nil, idx, err
	}
	return &OAuth2Result{UserSession: s, Meta: &OAuth2Meta{Identity: identityOf(m)}}, idx, nil
}

// mergeRow reads a merge token's row on this replica; nil if none.
func (o *OAuth2) mergeRow(ctx context.Context, coll, hash string) (*merge, error) {
	if o.au.core.InternalVersion() < oauth2SchemaVersion {
		return nil, nil
	}
	m := &merge{}
	err := o.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT user_id, provider, subject, email, expires_at FROM _svc_oauth2_merges WHERE hash = ? AND coll = ?`,
			hash, coll).Scan(&m.userID, &m.provider, &m.subject, &m.email, &m.exp)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return m, err
}

// applyMerge spends a merge token: a wrong password is counted (the
// fifth burns the token); a right proof links the identity and removes
// the token.
func (o *OAuth2) applyMerge(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[oauth2MergeCmd](cmd)
	if err != nil {
		return nil, err
	}
	var uid, provider, subject, email string
	var attempts, exp int64
	err = tx.QueryRow(`SELECT user_id, provider, subject, email, attempts, expires_at FROM _svc_oauth2_merges WHERE hash = ? AND coll = ?`,
		c.Hash, c.Coll).Scan(&uid, &provider, &subject, &email, &attempts, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return outcome("invalid"), nil
	}
	if err != nil {
		return nil, err
	}
	if exp < c.Now || uid != c.UserID {
		return outcome("invalid"), nil
	}
	if c.Wrong {
		if attempts+1 >= mergeMaxAttempts {
			_, err = tx.Exec(`DELETE FROM _svc_oauth2_merges WHERE hash = ?`, c.Hash)
		} else {
			_, err = tx.Exec(`UPDATE _svc_oauth2_merges SET attempts = attempts + 1 WHERE hash = ?`, c.Hash)
		}
		return outcome("wrong"), err
	}
	ci, err := o.au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, err
	}
	row, err := userRowTx(tx, ci, uid)
	if err != nil || row == nil {
		return outcome("invalid"), err
	}
	if c.PasswordDigest != "" && digestOf(engine.AsString(row[ci.RowIndex("password")])) != c.PasswordDigest {
		return outcome("wrong"), nil // the password changed since it was checked
	}
	if _, err := tx.Exec(`DELETE FROM _svc_oauth2_merges WHERE hash = ?`, c.Hash); err != nil {
		return nil, err
	}
	switch linked, err := linkedUser(tx, c.Coll, provider, subject); {
	case err != nil:
		return nil, err
	case linked == uid:
		return outcome(outLinked), nil
	case linked != "":
		return outcome(outTaken), nil
	}
	status, err := linkTx(tx, c.Coll, provider, subject, uid, email, c.Now)
	return outcome(status), err
}

// digestOf names a password hash without repeating it.
func digestOf(hash string) string {
	if hash == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(hash))
	return hex.EncodeToString(sum[:16])
}

// identityOf is the identity a merge token holds.
func identityOf(m *merge) oauth2.Identity {
	return oauth2.Identity{Provider: m.provider, ID: m.subject, Email: m.email, Verified: true}
}
