package auth

import (
	"context"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

var (
	errNotLinked       = &engine.Error{Kind: engine.KindNotFound, Message: "The account is not linked to this provider"}
	errLastSignInWay   = &engine.Error{Kind: engine.KindConflict, Message: "Unlinking would leave the account with no way to sign in: set a password or link another provider first"}
	errUnknownProvider = &engine.Error{Kind: engine.KindNotFound, Message: "Unknown OAuth2 provider"}
)

type oauth2UnlinkCmd struct {
	Coll     string `json:"coll"`
	UserID   string `json:"user_id"`
	Provider string `json:"provider"`
	// OTP: the account can sign in with an emailed code (the feature is
	// on and its email is real), decided when proposed.
	OTP bool `json:"otp"`
	// Passkeys: passkey sign-in is on for the collection (decided when
	// proposed); the account's passkeys then count as a way in.
	Passkeys bool  `json:"passkeys,omitempty"`
	Now      int64 `json:"now"`
}

// Unlink removes the caller's link to provider, unless it is the
// account's last way to sign in (no password, no other provider, no
// email OTP): 409 then.
func (o *OAuth2) Unlink(ctx context.Context, p engine.Principal, coll, provider string) (uint64, error) {
	ci, err := o.au.authCollection(coll)
	if err != nil {
		return 0, err
	}
	if !o.au.authFeature(ci, "oauth2") {
		return 0, errFeatureOff("OAuth2 sign-in")
	}
	row, err := o.au.ownUser(ctx, p, ci)
	if err != nil {
		return 0, err
	}
	if o.byName[provider] == nil {
		return 0, errUnknownProvider
	}
	email := engine.AsString(row[ci.RowIndex("email")])
	otp := o.au.authFeature(ci, "otp") && !strings.HasSuffix(email, ".invalid")
	passkeys := o.au.authFeature(ci, "webauthn")
	res, idx, err := o.au.core.Propose(ctx, cmdOAuth2Unlink, oauth2UnlinkCmd{
		Coll: ci.ID, UserID: p.ID, Provider: provider, OTP: otp, Passkeys: passkeys, Now: o.au.core.Now().Unix(),
	})
	if err != nil {
		return idx, err
	}
	switch outcomeOf(res).Status {
	case "ok":
		return idx, nil
	case "last":
		return idx, errLastSignInWay
	}
	return idx, errNotLinked
}

// applyUnlink removes the link when the account keeps a way to sign in.
func (o *OAuth2) applyUnlink(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[oauth2UnlinkCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := o.au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, err
	}
	row, err := userRowTx(tx, ci, c.UserID)
	if err != nil || row == nil {
		return nil, engine.FirstErr(err, errBadToken)
	}
	var mine, others int
	if err := tx.QueryRow(`SELECT count(*) FILTER (WHERE provider = ?), count(*) FILTER (WHERE provider <> ?)
		FROM _svc_oauth2_links WHERE coll = ? AND user_id = ?`, c.Provider, c.Provider, c.Coll, c.UserID).Scan(&mine, &others); err != nil {
		return nil, err
	}
	if mine == 0 {
		return outcome("none"), nil
	}
	hasPassword := engine.AsString(row[ci.RowIndex("password")]) != ""
	passkeys, err := passkeyCountTx(tx, c.Passkeys, c.Coll, c.UserID)
	if err != nil {
		return nil, err
	}
	if !hasPassword && others == 0 && !c.OTP && passkeys == 0 {
		return outcome("last"), nil
	}
	_, err = tx.Exec(`DELETE FROM _svc_oauth2_links WHERE coll = ? AND user_id = ? AND provider = ?`, c.Coll, c.UserID, c.Provider)
	return outcome("ok"), err
}

// passkeyCountTx is how many passkeys the account has, when passkey
// sign-in is on (on: decided when the command was proposed). A replica
// whose internal schema predates passkeys has none.
func passkeyCountTx(tx *fsm.Tx, on bool, coll, userID string) (int, error) {
	if !on {
		return 0, nil
	}
	if v, err := engine.InternalVersionTx(tx); err != nil || v < passkeysVersion {
		return 0, err
	}
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM _svc_webauthn_credentials WHERE coll = ? AND user_id = ?`, coll, userID).Scan(&n)
	return n, err
}
