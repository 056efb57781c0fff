package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/mail"
	"svcd/engine/password"
	"svcd/engine/token"
	"svcd/fsm"
)

// Password reset. The link token is a signed JWT with audience "reset"
// (id, email, collection, a jti, 30 minutes): nothing is stored when it is
// sent. Confirming it, decided when the command is applied, requires that
// the account still has the token's email, that the token is newer than
// the account's last reset, and that its jti was never used; it stores the
// new hash, sets password_reset_at (which ends every older session and
// reset token of the account), marks the email verified (the reset proved
// the mailbox) and revokes the token's jti.

// resetTTL is the lifetime of a password reset token.
const resetTTL = 30 * time.Minute

// RequestPasswordReset mails a reset link to email if it is an account of
// collection name (not anonymous). It answers the same, at once, whether
// or not the account exists and whether or not mail is configured (then
// nothing is sent and a warning is logged); only an unknown collection, a
// disabled feature or a malformed address is an error.
func (au *Auth) RequestPasswordReset(ctx context.Context, name, email string) error {
	ci, addr, sender, err := au.mailRequest(name, email, flowReset)
	if err != nil || sender == nil {
		return err
	}
	au.later(flowReset.what, func(ctx context.Context) error {
		row, err := au.userByEmail(ctx, ci, addr)
		if err != nil || row == nil || asBool(row[ci.RowIndex("is_anonymous")]) {
			return err
		}
		stored, _ := row[ci.RowIndex("email")].(string)
		tok, _, err := au.signer.Issue(token.Claims{ID: engine.AsString(row[0]), Email: stored, Collection: ci.ID}, audReset,
			issueAfter(au.core.Now(), engine.AsInt64(row[ci.RowIndex("password_reset_at")])), resetTTL)
		if err != nil {
			return err
		}
		c, err := mail.PasswordResetEmail(au.mailInput(ci, tok, "", resetTTL))
		if err != nil {
			return err
		}
		return send(ctx, sender, c, stored)
	})
	return nil
}

type passwordResetCmd struct {
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	JTI    string `json:"jti"`
	IAT    int64  `json:"iat"`
	Exp    int64  `json:"exp"`
	Hash   string `json:"hash"`
	Now    int64  `json:"now"`
}

// ConfirmPasswordReset sets a new password with a reset token. It returns
// the log index of the change (every older session of the account is
// refused from that index on).
func (au *Auth) ConfirmPasswordReset(ctx context.Context, name, tok, plain string) (uint64, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return 0, err
	}
	if !au.authFeature(ci, "password") {
		return 0, errFeatureOff("Password sign-in")
	}
	if d := blankDetails("token", tok, "password", plain); len(d) > 0 {
		return 0, engine.ValidationError(d)
	}
	c, err := au.signer.Verify(tok, audReset)
	if err != nil || c.Collection != ci.ID || c.IssuedAt == nil || c.ExpiresAt == nil {
		return 0, errBadFlowToken
	}
	if msg := au.core.Records().CheckPasswordPolicy(plain); msg != "" {
		return 0, engine.FieldError("password", msg)
	}
	hash, err := password.Hash(plain, au.core.PasswordParams())
	if err != nil {
		return 0, engine.Errorf(engine.KindInternal, "could not hash the password")
	}
	_, idx, err := au.core.Propose(ctx, cmdPasswordReset, passwordResetCmd{
		Coll: ci.ID, UserID: c.ID, Email: c.Email, JTI: c.RegisteredClaims.ID,
		IAT: c.IssuedAt.Unix(), Exp: c.ExpiresAt.Unix(), Hash: hash, Now: au.core.Now().Unix(),
	})
	return idx, err
}

func (au *Auth) applyPasswordReset(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[passwordResetCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := au.spendableTokenTx(tx, c.Coll, c.UserID, c.Email, c.IAT, c.JTI)
	if err != nil {
		return nil, err
	}
	// The reset time never precedes the token's own iat, so the token is
	// spent even when the proposer's clock is behind the issuer's.
	at := max(c.Now, c.IAT)
	if _, err := au.setUserColumns(tx, ci, c.UserID, c.Now,
		[]string{"password = ?", "password_reset_at = ?", "email_verified = 1"}, []any{c.Hash, at}); err != nil {
		return nil, fmt.Errorf("password reset: %w", err)
	}
	return nil, revokeTx(tx, c.JTI, c.Exp)
}

// spendableTokenTx checks, at apply, a mailed single-use token (a password
// reset, an email change) against the account it names: the account of
// collection coll still exists with the token's email and is not a guest,
// the token is newer than the account's last reset (this one included
// once applied) and its jti is unspent (which covers a token issued in
// the same second). It answers the account's collection.
func (au *Auth) spendableTokenTx(tx *fsm.Tx, coll, userID, email string, iat int64, jti string) (*engine.Coll, error) {
	ci, err := au.authCollForApply(tx, coll)
	if err != nil {
		return nil, errBadFlowToken
	}
	row, err := userRowTx(tx, ci, userID)
	if err != nil {
		return nil, err
	}
	if row == nil || !strings.EqualFold(engine.AsString(row[ci.RowIndex("email")]), email) ||
		asBool(row[ci.RowIndex("is_anonymous")]) {
		return nil, errBadFlowToken
	}
	if iat <= engine.AsInt64(row[ci.RowIndex("password_reset_at")]) {
		return nil, errBadFlowToken
	}
	if used, err := isRevokedTx(tx, jti); err != nil || used {
		return nil, engine.FirstErr(err, errBadFlowToken)
	}
	return ci, nil
}
