package auth

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Signing in with a passkey. The options step takes an email or nothing:
//
//   - with the email of an account that has passkeys, the options list
//     them (allowCredentials), and the ticket is bound to that account;
//   - with any other email (unknown, a guest's, an account without
//     passkeys) they list one decoy credential id, derived from the
//     email under a key of the cluster, so the answer has the same shape
//     and stays the same from one request to the next: it does not tell
//     whether the account exists. No authenticator holds the decoy, so
//     such a ceremony cannot succeed;
//   - without an email the ceremony is discoverable: the authenticator
//     offers the passkeys it holds for the relying party and its answer
//     names the account (the user handle is the account's id).
//
// The verify step finds the account by the credential, checks the
// assertion against the ticket's challenge and the stored public key, and
// proposes the sign-in. The apply consumes the ticket and checks the sign
// counter against the replicated one: when the stored and the new counter
// are both non-zero, the new one must be greater (else the authenticator
// may have been cloned: 401); a counter of 0 is accepted (synced passkeys
// always report 0). It keeps the largest counter seen, the backup state
// and the time of the sign-in.

var errPasskeyCounter = &engine.Error{Kind: engine.KindUnauthorized, Message: "Invalid credentials",
	Details: map[string]any{"response": "the passkey's sign counter did not increase: the authenticator may have been cloned"}}

// BeginPasskeyLogin answers the options of a passkey sign-in to
// collection name (for the account email, or discoverable when email is
// blank) and the ticket of the ceremony.
func (pk *Passkeys) BeginPasskeyLogin(ctx context.Context, name, email string) (*PasskeyCeremony, uint64, error) {
	ci, rp, err := pk.gate(name)
	if err != nil {
		return nil, 0, err
	}
	var user *PasskeyUser
	var decoy []byte
	if strings.TrimSpace(email) != "" {
		addr, msg := normalizeEmail(email)
		if msg != "" {
			return nil, 0, engine.FieldError("email", msg)
		}
		row, err := pk.au.userByEmail(ctx, ci, addr)
		if err != nil {
			return nil, 0, err
		}
		if row != nil && !asBool(row[ci.RowIndex("is_anonymous")]) {
			if user, err = pk.passkeyUserOf(ctx, ci, row); err != nil {
				return nil, 0, err
			}
		}
		if user == nil || len(user.Credentials) == 0 {
			user, decoy = nil, pk.decoyID(ci.ID, addr)
		}
	}
	opts, err := pk.proto.BeginLogin(rp, user, decoy)
	if err != nil {
		return nil, 0, refused(err, func(reason string) error { return fmt.Errorf("passkey sign-in options: %s", reason) })
	}
	uid := ""
	if user != nil {
		uid = user.ID
	}
	return pk.openCeremony(ctx, ceremonyLogin, ci.ID, uid, opts)
}

// decoyID is the credential id the options list for an email with no
// passkeys: 32 bytes, fixed per collection and email.
func (pk *Passkeys) decoyID(coll, email string) []byte {
	b, _ := hex.DecodeString(pk.au.macHex(keyPasskeyDecoy, coll, strings.ToLower(email)))
	return b
}

type passkeyLoginCmd struct {
	Ticket       string `json:"ticket"` // the ticket's hash
	Coll         string `json:"coll"`
	UserID       string `json:"user_id"`
	CredentialID string `json:"credential_id"`
	SignCount    int64  `json:"sign_count"`
	BackedUp     bool   `json:"backed_up"`
	Now          int64  `json:"now"`
}

// FinishPasskeyLogin checks the authenticator's answer to the options of
// in.Ticket and opens a session for the passkey's account. It never
// answers an MFA ticket: a passkey with user verification is a strong
// factor by itself. Every failure to verify is 401 Invalid credentials.
func (pk *Passkeys) FinishPasskeyLogin(ctx context.Context, name string, in PasskeyFinish) (*UserSession, uint64, error) {
	ci, rp, err := pk.gate(name)
	if err != nil {
		return nil, 0, err
	}
	if d := blankDetails("ticket", in.Ticket, "response", string(bytes.TrimSpace(in.Response))); len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	cer, err := pk.readCeremony(ctx, ceremonyLogin, ci.ID, in.Ticket)
	if err != nil {
		return nil, 0, err
	}
	if cer == nil {
		return nil, 0, errPasskeyTicket
	}
	got, err := pk.proto.FinishLogin(rp, cer.session, in.Response, func(raw []byte) (*PasskeyUser, error) {
		return pk.assertionUser(ctx, ci, cer, raw)
	})
	if err != nil {
		return nil, 0, refused(err, func(reason string) error {
			pk.au.core.Logger().Debug("passkey sign-in refused", "collection", ci.Name, "reason", reason)
			return ErrInvalidCreds
		})
	}
	res, idx, err := pk.au.core.Propose(ctx, cmdPasskeyLogin, passkeyLoginCmd{
		Ticket: cer.hash, Coll: ci.ID, UserID: got.UserID, CredentialID: base64.RawURLEncoding.EncodeToString(got.CredentialID),
		SignCount: int64(got.SignCount), BackedUp: got.BackedUp, Now: pk.au.core.Now().Unix(),
	})
	if err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) && ee.Details["response"] != nil {
			pk.au.core.Logger().Warn("passkey sign-in refused: the sign counter did not increase", "collection", ci.Name, "user", got.UserID)
		}
		return nil, idx, err
	}
	if out := outcomeOf(res); out.Status != "ok" {
		return nil, idx, ErrInvalidCreds
	}
	row, err := pk.au.userByID(ctx, ci, got.UserID)
	if err != nil || row == nil {
		return nil, idx, engine.FirstErr(err, ErrInvalidCreds)
	}
	s, err := pk.au.issueUserSession(ci, row, 0, "")
	return s, idx, err
}

// assertionUser is the account that owns the credential raw, with its
// passkeys: nil when no account of ci has it, or the ticket is bound to
// another account.
func (pk *Passkeys) assertionUser(ctx context.Context, ci *engine.Coll, cer *ceremony, raw []byte) (*PasskeyUser, error) {
	uid, err := pk.credentialOwner(ctx, ci, raw)
	if err != nil || uid == "" || (cer.userID != "" && cer.userID != uid) {
		return nil, err
	}
	row, err := pk.au.userByID(ctx, ci, uid)
	if err != nil || row == nil {
		return nil, err
	}
	return pk.passkeyUserOf(ctx, ci, row)
}

func (pk *Passkeys) applyLogin(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[passkeyLoginCmd](cmd)
	if err != nil {
		return nil, err
	}
	if ok, err := consumeCeremony(tx, c.Ticket, ceremonyLogin, c.Coll, c.UserID, c.Now); err != nil || !ok {
		return nil, engine.FirstErr(err, errPasskeyTicket)
	}
	var stored int64
	err = tx.QueryRow(`SELECT sign_count FROM _svc_webauthn_credentials WHERE credential_id = ? AND coll = ? AND user_id = ?`,
		c.CredentialID, c.Coll, c.UserID).Scan(&stored)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrInvalidCreds // deleted meanwhile
	case err != nil:
		return nil, err
	case c.SignCount != 0 && stored != 0 && c.SignCount <= stored:
		return nil, errPasskeyCounter
	}
	ci, err := pk.au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, err
	}
	if row, err := userRowTx(tx, ci, c.UserID); err != nil || row == nil {
		return nil, engine.FirstErr(err, ErrInvalidCreds)
	}
	if _, err := tx.Exec(`UPDATE _svc_webauthn_credentials SET sign_count = max(sign_count, ?), backed_up = ?,
		last_used = max(last_used, ?) WHERE credential_id = ?`, c.SignCount, c.BackedUp, c.Now, c.CredentialID); err != nil {
		return nil, err
	}
	return &flowOutcome{Status: "ok", UserID: c.UserID}, nil
}
