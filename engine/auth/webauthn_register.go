package auth

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"svcd/engine"
	"svcd/fsm"
)

// Registering a passkey: the signed-in user asks for options (which
// exclude the passkeys the account has, so an authenticator is not
// registered twice), the browser creates the credential, and the verify
// step checks the attestation against the ticket and stores the
// credential. Guests cannot add a passkey (promote first), nor can an
// impersonation session: a passkey would outlive the impersonation's
// hour.

// defaultPasskeyName names a passkey registered without a name.
const defaultPasskeyName = "Passkey"

// maxPasskeyName is the longest name, in characters.
const maxPasskeyName = 100

// registrant resolves the caller of a registration step, and the relying
// party.
func (pk *Passkeys) registrant(ctx context.Context, p engine.Principal, name string) (*engine.Coll, RelyingParty, []any, error) {
	ci, rp, err := pk.gate(name)
	if err != nil {
		return nil, rp, nil, err
	}
	row, err := pk.au.ownUser(ctx, p, ci)
	if err != nil {
		return nil, rp, nil, err
	}
	switch {
	case asBool(row[ci.RowIndex("is_anonymous")]):
		return nil, rp, nil, errNoAnonymous
	case p.Claims != nil && p.Claims.ImpersonatedBy != "":
		return nil, rp, nil, errImpersonated
	}
	return ci, rp, row, nil
}

// BeginPasskeyRegistration answers the options of a new passkey for the
// caller, and the ticket of the ceremony.
func (pk *Passkeys) BeginPasskeyRegistration(ctx context.Context, p engine.Principal, name string) (*PasskeyCeremony, uint64, error) {
	ci, rp, row, err := pk.registrant(ctx, p, name)
	if err != nil {
		return nil, 0, err
	}
	user, err := pk.passkeyUserOf(ctx, ci, row)
	if err != nil {
		return nil, 0, err
	}
	if len(user.Credentials) >= maxPasskeys {
		return nil, 0, errPasskeysFull
	}
	opts, err := pk.proto.BeginRegistration(rp, user)
	if err != nil {
		return nil, 0, refused(err, notVerified)
	}
	return pk.openCeremony(ctx, ceremonyRegister, ci.ID, user.ID, opts)
}

type passkeyRegisterCmd struct {
	Ticket       string `json:"ticket"` // the ticket's hash
	Coll         string `json:"coll"`
	UserID       string `json:"user_id"`
	ID           string `json:"id"`
	CredentialID string `json:"credential_id"`
	Name         string `json:"name"`
	Data         string `json:"data"`
	SignCount    int64  `json:"sign_count"`
	BackedUp     bool   `json:"backed_up"`
	Now          int64  `json:"now"`
}

// FinishPasskeyRegistration checks the authenticator's answer to the
// options of in.Ticket and stores the new passkey.
func (pk *Passkeys) FinishPasskeyRegistration(ctx context.Context, p engine.Principal, name string, in PasskeyFinish) (*Passkey, uint64, error) {
	ci, rp, row, err := pk.registrant(ctx, p, name)
	if err != nil {
		return nil, 0, err
	}
	label, err := passkeyName(in.Name)
	if err != nil {
		return nil, 0, err
	}
	if d := blankDetails("ticket", in.Ticket, "response", string(bytes.TrimSpace(in.Response))); len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	user, err := pk.passkeyUserOf(ctx, ci, row)
	if err != nil {
		return nil, 0, err
	}
	cer, err := pk.readCeremony(ctx, ceremonyRegister, ci.ID, in.Ticket)
	if err != nil {
		return nil, 0, err
	}
	if cer == nil || cer.userID != user.ID {
		return nil, 0, errRegisterTicket
	}
	cred, err := pk.proto.FinishRegistration(rp, user, cer.session, in.Response)
	if err != nil {
		return nil, 0, refused(err, notVerified)
	}
	id := engine.NewID()
	_, idx, err := pk.au.core.Propose(ctx, cmdPasskeyRegister, passkeyRegisterCmd{
		Ticket: cer.hash, Coll: ci.ID, UserID: user.ID, ID: id, CredentialID: base64.RawURLEncoding.EncodeToString(cred.CredentialID),
		Name: label, Data: string(cred.Record), SignCount: int64(cred.SignCount), BackedUp: cred.BackedUp,
		Now: pk.au.core.Now().Unix(),
	})
	if err != nil {
		return nil, idx, err
	}
	out, err := pk.passkeyByID(ctx, ci.ID, user.ID, id)
	if err == nil && out == nil {
		err = errPasskeyUnknown // deleted meanwhile
	}
	return out, idx, err
}

// notVerified answers a registration whose answer does not verify.
func notVerified(reason string) error {
	return engine.FieldError("response", "does not verify: "+reason)
}

func (pk *Passkeys) applyRegister(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[passkeyRegisterCmd](cmd)
	if err != nil {
		return nil, err
	}
	if ok, err := consumeCeremony(tx, c.Ticket, ceremonyRegister, c.Coll, c.UserID, c.Now); err != nil || !ok {
		return nil, engine.FirstErr(err, errRegisterTicket)
	}
	ci, err := pk.au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, err
	}
	if row, err := userRowTx(tx, ci, c.UserID); err != nil || row == nil {
		return nil, engine.FirstErr(err, errUserNotFound)
	}
	var n int64
	if err := tx.QueryRow(`SELECT count(*) FROM _svc_webauthn_credentials WHERE coll = ? AND user_id = ?`, c.Coll, c.UserID).Scan(&n); err != nil {
		return nil, err
	}
	if n >= maxPasskeys {
		return nil, errPasskeysFull
	}
	var taken string
	err = tx.QueryRow(`SELECT id FROM _svc_webauthn_credentials WHERE credential_id = ?`, c.CredentialID).Scan(&taken)
	switch {
	case err == nil:
		return nil, errPasskeyTaken
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	_, err = tx.Exec(`INSERT INTO _svc_webauthn_credentials (id, coll, user_id, credential_id, name, data, sign_count,
		backed_up, created, last_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
		c.ID, c.Coll, c.UserID, c.CredentialID, c.Name, c.Data, c.SignCount, c.BackedUp, c.Now)
	return nil, err
}

// passkeyName validates a passkey's name: trimmed, at most 100
// characters, the default when blank.
func passkeyName(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return defaultPasskeyName, nil
	case utf8.RuneCountInString(s) > maxPasskeyName:
		return "", engine.FieldError("name", fmt.Sprintf("must be at most %d characters", maxPasskeyName))
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", engine.FieldError("name", "must not contain control characters")
	}
	return s, nil
}
