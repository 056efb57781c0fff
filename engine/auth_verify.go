package engine

import (
	"context"
	"strings"
	"time"

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
func (e *Engine) RequestVerification(ctx context.Context, name, email string) error {
	ci, addr, sender, err := e.mailRequest(name, email, "", "")
	if err != nil {
		return err
	}
	e.later("email verification", func(ctx context.Context) error {
		row, err := e.userByEmail(ctx, ci, addr)
		if err != nil || row == nil || asBool(row[ci.rowIndex("is_anonymous")]) || asBool(row[ci.rowIndex("email_verified")]) {
			return err
		}
		stored, _ := row[ci.rowIndex("email")].(string)
		tok, _, err := e.signer.Issue(token.Claims{ID: asString(row[0]), Email: stored, Collection: ci.ID}, audVerify, e.now(), verifyTTL)
		if err != nil {
			return err
		}
		c, err := mail.VerificationEmail(e.mailInput(ci, tok, "", verifyTTL))
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
func (e *Engine) ConfirmVerification(ctx context.Context, name, tok string) (uint64, error) {
	ci, err := e.authCollection(name)
	if err != nil {
		return 0, err
	}
	if d := blankDetails("token", tok); len(d) > 0 {
		return 0, ValidationError(d)
	}
	c, err := e.signer.Verify(tok, audVerify)
	if err != nil || c.Collection != ci.ID {
		return 0, errBadFlowToken
	}
	_, idx, err := e.propose(ctx, cmdEmailVerify, emailVerifyCmd{Coll: ci.ID, UserID: c.ID, Email: c.Email, Now: e.now().Unix()})
	return idx, err
}

func (e *Engine) applyEmailVerify(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[emailVerifyCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := e.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, errBadFlowToken
	}
	row, err := userRowTx(tx, ci, c.UserID)
	if err != nil {
		return nil, err
	}
	if row == nil || !strings.EqualFold(asString(row[ci.rowIndex("email")]), c.Email) {
		return nil, errBadFlowToken
	}
	if asBool(row[ci.rowIndex("email_verified")]) {
		return nil, nil
	}
	_, err = e.setUserColumns(tx, ci, c.UserID, c.Now, []string{"email_verified = 1"}, nil)
	return nil, err
}
