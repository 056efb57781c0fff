package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/mail"
	"svcd/engine/token"
	"svcd/fsm"
)

// Confirmed email change. The signed-in account asks to move to a new
// address; a signed JWT with audience "email_change" (id, current email,
// newEmail, collection, a jti; auth.email_change.ttl_seconds, 30 minutes
// by default) is mailed to the new address, and nothing is stored. The
// confirmation carries the token and the account's password. Applied
// through the log, it requires that the account still has the token's
// email, that the token is newer than the account's last reset, that its
// jti was never used and that no other account of the collection holds the
// new address (case-insensitive); it sets the email, marks it verified (the
// mail proved the mailbox), sets password_reset_at (every older session
// and flow token of the account is refused, its realtime streams close)
// and revokes the jti.
//
// Only the account's own user session may ask: not an admin or API token,
// not an impersonation session (its admin does not know the password the
// confirmation asks for), not an anonymous guest (promote it first).

// Errors of the email change whose meaning the PocketBase layer
// translates into its own field codes.
var (
	// ErrNewEmailTaken: another account of the collection has the address.
	ErrNewEmailTaken = engine.FieldError("new_email", "is already in use")
	// ErrNewEmailSame: the address is the account's current one.
	ErrNewEmailSame = engine.FieldError("new_email", "is the current email")
	// ErrEmailChangePassword: the confirmation's password is not the
	// account's.
	ErrEmailChangePassword = &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid password",
		Details: map[string]any{"password": "is not the account's password"}}
)

// IsEmailChangeError reports whether err is target (one of the errors
// above): the same kind, message and details, also after the error crossed
// the log or a node (every validation error shares its kind and message).
func IsEmailChangeError(err error, target *engine.Error) bool {
	e := engine.AsError(err)
	if e == nil || e.Kind != target.Kind || e.Message != target.Message || len(e.Details) != len(target.Details) {
		return false
	}
	for k, v := range target.Details {
		if fmt.Sprint(e.Details[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// emailChangeTTL is the lifetime of an email change token.
func (au *Auth) emailChangeTTL() time.Duration {
	return au.adm.windowSetting("auth.email_change.ttl_seconds", 30*time.Minute)
}

// RequestEmailChange mails a confirmation token for newEmail to newEmail.
// p must be the account's own user session in collection name. A
// malformed, current or taken address is refused at once (the caller is
// signed in: the answer reveals no more than a record update's uniqueness
// error would). Without mail configured nothing is sent and a warning is
// logged, as for the other mailed flows.
func (au *Auth) RequestEmailChange(ctx context.Context, p engine.Principal, name, newEmail string) error {
	ci, err := au.authCollection(name)
	if err != nil {
		return err
	}
	row, err := au.ownUser(ctx, p, ci)
	if err != nil {
		return err
	}
	if impersonation(p) {
		return errOwnAccountOnly
	}
	if asBool(row[ci.RowIndex("is_anonymous")]) {
		return errNoAnonymous
	}
	if strings.TrimSpace(newEmail) == "" {
		return engine.FieldError("new_email", "cannot be blank")
	}
	addr, msg := normalizeEmail(newEmail)
	if msg != "" {
		return engine.FieldError("new_email", msg)
	}
	current := engine.AsString(row[ci.RowIndex("email")])
	if strings.EqualFold(addr, current) {
		return ErrNewEmailSame
	}
	other, err := au.userByEmail(ctx, ci, addr)
	if err != nil {
		return err
	}
	if other != nil {
		return ErrNewEmailTaken
	}
	sender, err := au.mailer()
	if err != nil {
		au.core.Logger().Warn("auth mail not sent: "+err.Error(), "what", "email change", "collection", ci.Name)
		return nil
	}
	ttl := au.emailChangeTTL()
	tok, _, err := au.signer.Issue(token.Claims{ID: engine.AsString(row[0]), Email: current, NewEmail: addr, Collection: ci.ID}, audEmail,
		issueAfter(au.core.Now(), engine.AsInt64(row[ci.RowIndex("password_reset_at")])), ttl)
	if err != nil {
		return engine.Errorf(engine.KindInternal, "could not sign the token")
	}
	au.later("email change", func(ctx context.Context) error {
		c, err := mail.EmailChangeEmail(au.mailInput(ci, tok, "", ttl))
		if err != nil {
			return err
		}
		return send(ctx, sender, c, addr)
	})
	return nil
}

type emailChangeCmd struct {
	Coll     string `json:"coll"`
	UserID   string `json:"user_id"`
	Email    string `json:"email"`
	NewEmail string `json:"new_email"`
	JTI      string `json:"jti"`
	IAT      int64  `json:"iat"`
	Exp      int64  `json:"exp"`
	Now      int64  `json:"now"`
}

// ConfirmEmailChange moves the token's account to the token's new address
// when plain is the account's password. It returns the log index of the
// change (every older session of the account is refused from that index
// on). Wrong passwords count toward the login lockout (auth.lockout.*),
// under a key of their own: the collection and the account's current
// email, with no client address.
func (au *Auth) ConfirmEmailChange(ctx context.Context, name, tok, plain string) (uint64, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return 0, err
	}
	if d := blankDetails("token", tok, "password", plain); len(d) > 0 {
		return 0, engine.ValidationError(d)
	}
	c, err := au.signer.Verify(tok, audEmail)
	if err != nil || c.Collection != ci.ID || c.NewEmail == "" || c.IssuedAt == nil || c.ExpiresAt == nil {
		return 0, errBadFlowToken
	}
	row, err := au.userByID(ctx, ci, c.ID)
	if err != nil {
		return 0, err
	}
	if row == nil || !strings.EqualFold(engine.AsString(row[ci.RowIndex("email")]), c.Email) ||
		c.IssuedAt.Unix() <= engine.AsInt64(row[ci.RowIndex("password_reset_at")]) {
		return 0, errBadFlowToken
	}
	key := lockoutKey(ci.ID, c.Email, "")
	if d := au.lockedFor(ctx, key); d > 0 {
		return 0, errLockedOut(d)
	}
	hash, _ := row[ci.RowIndex("password")].(string)
	if hash == "" || !au.verifyUserPassword(ctx, ci, c.ID, plain, hash) {
		au.loginFailed(ctx, key)
		return 0, ErrEmailChangePassword
	}
	_, idx, err := au.core.Propose(ctx, cmdEmailChange, emailChangeCmd{
		Coll: ci.ID, UserID: c.ID, Email: c.Email, NewEmail: c.NewEmail, JTI: c.RegisteredClaims.ID,
		IAT: c.IssuedAt.Unix(), Exp: c.ExpiresAt.Unix(), Now: au.core.Now().Unix(),
	})
	return idx, err
}

func (au *Auth) applyEmailChange(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[emailChangeCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := au.spendableTokenTx(tx, c.Coll, c.UserID, c.Email, c.IAT, c.JTI)
	if err != nil {
		return nil, err
	}
	// The address may have been taken since the request.
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM "+ci.Table()+" WHERE email = ? COLLATE NOCASE AND id != ?", c.NewEmail, c.UserID).Scan(&n); err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, ErrNewEmailTaken
	}
	at := max(c.Now, c.IAT)
	if _, err := au.setUserColumns(tx, ci, c.UserID, c.Now,
		[]string{"email = ?", "email_verified = 1", "password_reset_at = ?"}, []any{c.NewEmail, at}); err != nil {
		return nil, fmt.Errorf("email change: %w", err)
	}
	return nil, revokeTx(tx, c.JTI, c.Exp)
}
