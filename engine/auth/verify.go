package auth

import (
	"context"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/mail"
	"svcd/engine/token"
	"svcd/fsm"
)

// Email verification. The link token is a signed JWT with audience
// "verify" (id, email, collection; 3 days). Confirming sets email_verified
// when the account still has the token's email, decided at apply time; a
// second confirmation changes nothing and succeeds.

// verifyTTL is the lifetime of an email verification token.
const verifyTTL = 72 * time.Hour

// RequestVerification mails a verification link to email if it is an
// unverified, non-anonymous account of collection name. Like the password
// reset request it answers the same, at once, whatever the account.
func (au *Auth) RequestVerification(ctx context.Context, name, email string) error {
	ci, addr, sender, err := au.mailRequest(name, email, flowVerify)
	if err != nil || sender == nil {
		return err
	}
	au.later(flowVerify.what, func(ctx context.Context) error {
		row, err := au.userByEmail(ctx, ci, addr)
		if err != nil || row == nil || asBool(row[ci.RowIndex("is_anonymous")]) || asBool(row[ci.RowIndex("email_verified")]) {
			return err
		}
		stored, _ := row[ci.RowIndex("email")].(string)
		tok, _, err := au.signer.Issue(token.Claims{ID: engine.AsString(row[0]), Email: stored, Collection: ci.ID}, audVerify, au.core.Now(), verifyTTL)
		if err != nil {
			return err
		}
		c, err := mail.VerificationEmail(au.mailInput(ci, tok, "", verifyTTL))
		if err != nil {
			return err
		}
		return send(ctx, sender, c, stored)
	})
	return nil
}

type emailVerifyCmd struct {
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Now    int64  `json:"now"`
}

// ConfirmVerification marks the token's account verified.
func (au *Auth) ConfirmVerification(ctx context.Context, name, tok string) (uint64, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return 0, err
	}
	if d := blankDetails("token", tok); len(d) > 0 {
		return 0, engine.ValidationError(d)
	}
	c, err := au.signer.Verify(tok, audVerify)
	if err != nil || c.Collection != ci.ID {
		return 0, errBadFlowToken
	}
	_, idx, err := au.core.Propose(ctx, cmdEmailVerify, emailVerifyCmd{Coll: ci.ID, UserID: c.ID, Email: c.Email, Now: au.core.Now().Unix()})
	return idx, err
}

func (au *Auth) applyEmailVerify(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[emailVerifyCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, errBadFlowToken
	}
	row, err := userRowTx(tx, ci, c.UserID)
	if err != nil {
		return nil, err
	}
	if row == nil || !strings.EqualFold(engine.AsString(row[ci.RowIndex("email")]), c.Email) {
		return nil, errBadFlowToken
	}
	if asBool(row[ci.RowIndex("email_verified")]) {
		return nil, nil
	}
	_, err = au.setUserColumns(tx, ci, c.UserID, c.Now, []string{"email_verified = 1"}, nil)
	return nil, err
}
